<?php

namespace App\Jobs;

use App\Interop\Outcome;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;
use RuntimeException;

// Fails with a plain RuntimeException whose message is Ukrainian text with
// quotes, as real payment providers' errors tend to be.
class ChargeCard implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public $tries = 1;

    public function __construct(public int $orderId, public int $amountCents, public string $currency)
    {
    }

    public function handle()
    {
        if (! Outcome::flagIsSet()) {
            throw new RuntimeException(static::failureMessage($this->orderId));
        }
        Outcome::record(static::class, ['order_id' => $this->orderId, 'amount_cents' => $this->amountCents, 'currency' => $this->currency]);
    }

    public static function failureMessage(int $orderId): string
    {
        return "Платіж не пройшов: банк відхилив картку \"**** 4242\" (замовлення #{$orderId})";
    }
}
