<?php

namespace App\Notifications\Channels;

// InteropChannel delivers a notification by calling its toInterop(), which
// fails while INTEROP_FLAG_FILE is missing (ChannelManager resolves a
// channel named by its class from the container).
class InteropChannel
{
    public function send($notifiable, $notification)
    {
        $notification->toInterop($notifiable);
    }
}
