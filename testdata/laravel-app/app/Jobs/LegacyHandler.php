<?php

namespace App\Jobs;

use App\Interop\Outcome;
use RuntimeException;

// A pre-5.x style string job, pushed as Queue::push('App\Jobs\LegacyHandler@handle', $data):
// its payload has no data.command and no retryUntil key, and the handler
// must delete the job itself.
class LegacyHandler
{
    public function handle($job, $data)
    {
        if (! Outcome::flagIsSet()) {
            throw new RuntimeException('legacy handler refused record '.($data['record'] ?? '?'));
        }
        Outcome::record(static::class, $data);
        $job->delete();
    }
}
