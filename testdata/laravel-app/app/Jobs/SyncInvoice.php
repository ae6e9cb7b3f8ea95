<?php

namespace App\Jobs;

use App\Exceptions\PaymentGatewayException;
use App\Interop\Outcome;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;
use LogicException;

// Fails with a chained exception: PHP prints the previous (inner) exception
// first and the thrown one last, after "Next".
class SyncInvoice implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public function __construct(public string $invoiceNumber)
    {
    }

    public function handle()
    {
        if (! Outcome::flagIsSet()) {
            $inner = new LogicException('currency mismatch: invoice in IDR, ledger in EUR');
            throw new PaymentGatewayException(static::failureMessage($this->invoiceNumber), 502, $inner);
        }
        Outcome::record(static::class, ['invoice_number' => $this->invoiceNumber]);
    }

    public static function failureMessage(string $invoiceNumber): string
    {
        return "Gateway rejected invoice {$invoiceNumber}";
    }
}
