<?php

namespace App\Jobs;

use App\Interop\Outcome;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldBeUnique;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;
use RuntimeException;

// A unique job: dispatching it takes a lock in the cache store, which
// Laravel 11+ records in the payload's illuminate:log:context (Context).
class RebuildSearchIndex implements ShouldBeUnique, ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public $tries = 1;

    public function __construct(public string $index)
    {
    }

    public function uniqueId()
    {
        return $this->index;
    }

    public function handle()
    {
        if (! Outcome::flagIsSet()) {
            throw new RuntimeException(static::failureMessage($this->index));
        }
        Outcome::record(static::class, ['index' => $this->index]);
    }

    public static function failureMessage(string $index): string
    {
        return "search cluster rejected the rebuild of index {$index}";
    }
}
