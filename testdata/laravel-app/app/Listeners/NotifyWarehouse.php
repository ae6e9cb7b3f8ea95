<?php

namespace App\Listeners;

use App\Events\OrderShipped;
use App\Interop\Outcome;
use Illuminate\Contracts\Queue\ShouldQueue;
use RuntimeException;

// A queued listener: the job is Illuminate\Events\CallQueuedListener and its
// displayName is this class.
class NotifyWarehouse implements ShouldQueue
{
    public $queue = 'emails';

    public function handle(OrderShipped $event)
    {
        if (! Outcome::flagIsSet()) {
            throw new RuntimeException("warehouse API returned 503 for order {$event->orderId} via {$event->carrier}");
        }
        Outcome::record(static::class, ['order_id' => $event->orderId, 'carrier' => $event->carrier]);
    }
}
