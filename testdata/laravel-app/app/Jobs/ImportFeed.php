<?php

namespace App\Jobs;

use App\Interop\Outcome;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

// Bounded by retryUntil() a few seconds after dispatch instead of tries. While
// the flag is missing it releases itself past that deadline, so the worker's
// next pick fails it with MaxAttemptsExceededException and the stored payload
// carries an expired retryUntil.
class ImportFeed implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public int $until;

    public function __construct(public string $feedUrl, int $seconds)
    {
        $this->until = time() + $seconds;
    }

    public function retryUntil()
    {
        return $this->until;
    }

    public function handle()
    {
        if (! Outcome::flagIsSet()) {
            $this->release(max(1, $this->until - time() + 2));

            return;
        }
        Outcome::record(static::class, ['feed_url' => $this->feedUrl]);
    }
}
