<?php

namespace App\Providers;

use App\Events\OrderShipped;
use App\Listeners\NotifyWarehouse;
use Illuminate\Support\Facades\Event;
use Illuminate\Support\ServiceProvider;

class AppServiceProvider extends ServiceProvider
{
    public function boot()
    {
        // NotifyWarehouse implements ShouldQueue, so the dispatcher queues it
        // as an Illuminate\Events\CallQueuedListener job.
        Event::listen(OrderShipped::class, NotifyWarehouse::class);
    }
}
