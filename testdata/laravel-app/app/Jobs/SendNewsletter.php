<?php

namespace App\Jobs;

use App\Interop\Outcome;
use Illuminate\Contracts\Queue\ShouldBeEncrypted;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;
use RuntimeException;

// Its data.command is encrypted with APP_KEY; displayName stays readable.
class SendNewsletter implements ShouldQueue, ShouldBeEncrypted
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public function __construct(public int $newsletterId, public string $recipient)
    {
    }

    public function handle()
    {
        if (! Outcome::flagIsSet()) {
            throw new RuntimeException(static::failureMessage($this->recipient));
        }
        Outcome::record(static::class, ['newsletter_id' => $this->newsletterId, 'recipient' => $this->recipient]);
    }

    public static function failureMessage(string $recipient): string
    {
        return "SMTP 554 5.7.1 <{$recipient}>: Relay access denied";
    }
}
