<?php

namespace App\Notifications;

use App\Interop\Outcome;
use App\Notifications\Channels\InteropChannel;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Notifications\Notification;
use RuntimeException;

// A queued notification: its payload's displayName is this class while
// data.commandName is Illuminate\Notifications\SendQueuedNotifications. It
// fails twice: the first failure is released (tries 2, backoff 1 s), which on
// Redis re-encodes the payload with cjson, and the second one is final.
class InvoicePaid extends Notification implements ShouldQueue
{
    use Queueable;

    public $tries = 2;

    public $backoff = 1;

    // $lines makes the serialized command long, as real invoices do, so
    // that keys cjson orders after data can sit far into the payload.
    public function __construct(public string $invoiceNumber, public int $customerId, public array $lines)
    {
    }

    public function via($notifiable)
    {
        return [InteropChannel::class];
    }

    public function toInterop($notifiable)
    {
        if (! Outcome::flagIsSet()) {
            throw new RuntimeException(static::failureMessage($this->invoiceNumber));
        }
        Outcome::record(static::class, ['invoice_number' => $this->invoiceNumber, 'customer_id' => $this->customerId]);
    }

    // One tag per line item, as Horizon's automatic model tags grow with a
    // notification's models: cjson writes tags before displayName, so the
    // class lands past the first kilobyte of the failed payload.
    public function tags()
    {
        $tags = ['invoice:'.$this->invoiceNumber, 'App\Models\Customer:'.$this->customerId];
        foreach ($this->lines as $line) {
            $tags[] = 'invoice-line:'.$this->invoiceNumber.':'.$line['sku'];
        }

        return $tags;
    }

    public static function failureMessage(string $invoiceNumber): string
    {
        return "mail relay refused the receipt for invoice {$invoiceNumber}: 550 mailbox unavailable";
    }
}
