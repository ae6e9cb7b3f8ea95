<?php

namespace App\Providers;

use App\Events\OrderShipped;
use App\Listeners\NotifyWarehouse;
use Illuminate\Support\Facades\Event;
use Illuminate\Support\Facades\Queue;
use Illuminate\Support\ServiceProvider;

class AppServiceProvider extends ServiceProvider
{
    public function boot()
    {
        // NotifyWarehouse implements ShouldQueue, so the dispatcher queues it
        // as an Illuminate\Events\CallQueuedListener job.
        Event::listen(OrderShipped::class, NotifyWarehouse::class);

        // INTEROP_HORIZON_KEYS=1 adds the keys Horizon's JobPayload::prepare
        // adds (type, tags, pushedAt, silenced) through the same hook
        // Horizon-like packages use, without installing Horizon.
        if (env('INTEROP_HORIZON_KEYS') === '1' || env('INTEROP_HORIZON_KEYS') === true) {
            Queue::createPayloadUsing(function ($connection, $queue, array $payload) {
                $command = $payload['data']['command'] ?? null;

                return [
                    'type' => self::horizonType($command),
                    'tags' => self::horizonTags($command),
                    'pushedAt' => str_replace(',', '.', (string) microtime(true)),
                    'silenced' => false,
                ];
            });
        }
    }

    // horizonType is Horizon's JobPayload::determineType.
    private static function horizonType($command): string
    {
        switch (true) {
            case $command instanceof \Illuminate\Broadcasting\BroadcastEvent:
                return 'broadcast';
            case $command instanceof \Illuminate\Events\CallQueuedListener:
                return 'event';
            case $command instanceof \Illuminate\Mail\SendQueuedMailable:
                return 'mail';
            case $command instanceof \Illuminate\Notifications\SendQueuedNotifications:
                return 'notification';
            default:
                return 'job';
        }
    }

    // horizonTags asks the real target (the notification inside
    // SendQueuedNotifications, as Horizon's Tags::targetsFor does) for tags().
    private static function horizonTags($command): array
    {
        if (! is_object($command)) {
            return [];
        }
        $target = $command->notification ?? $command->mailable ?? $command->event ?? $command;

        return method_exists($target, 'tags') ? array_values($target->tags()) : [];
    }
}
