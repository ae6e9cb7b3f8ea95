<?php

namespace App\Jobs;

use App\Interop\Outcome;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;
use RuntimeException;

// One of many jobs with one cause of failure, for retry --canary and
// --follow: it fails while INTEROP_FLAG_FILE is missing (the cause not
// fixed), and, once it exists, still fails for the orders listed one a line
// in INTEROP_BROKEN_FILE (a second, different cause).
class SettleOrder implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public function __construct(public int $order)
    {
    }

    public function handle()
    {
        if (! Outcome::flagIsSet()) {
            throw new RuntimeException('Payment gateway unavailable while settling order '.$this->order);
        }
        $broken = getenv('INTEROP_BROKEN_FILE');
        if (is_string($broken) && $broken !== '' && file_exists($broken)) {
            $orders = array_map('intval', array_filter(array_map('trim', file($broken))));
            if (in_array($this->order, $orders, true)) {
                throw new RuntimeException('Order '.$this->order.' was cancelled by the customer');
            }
        }
        Outcome::record(static::class, ['order' => $this->order]);
    }
}
