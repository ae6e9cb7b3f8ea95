<?php

namespace App\Console\Commands;

use Illuminate\Console\Command;
use Illuminate\Support\Facades\DB;
use Illuminate\Support\Facades\Queue;

// Prints queue state as one JSON object so the Go harness knows when the
// workers are done and how long to wait for delayed (released) jobs.
class StatusCommand extends Command
{
    protected $signature = 'interop:status';

    protected $description = 'Print {"jobs":n,"failed":n,"next_available_in":seconds} as JSON';

    public function handle()
    {
        $now = time();
        if (config('queue.default') === 'redis') {
            // size() counts the list, :delayed and :reserved alike.
            $queue = Queue::connection('redis');
            $this->line(json_encode([
                'jobs' => $queue->size('default') + $queue->size('emails'),
                'failed' => DB::table('failed_jobs')->count(),
                'next_available_in' => 0,
            ]));

            return 0;
        }
        $nextAvailable = DB::table('jobs')->whereNull('reserved_at')->min('available_at');
        $this->line(json_encode([
            'jobs' => DB::table('jobs')->count(),
            'failed' => DB::table('failed_jobs')->count(),
            'next_available_in' => $nextAvailable === null ? 0 : max(0, (int) $nextAvailable - $now),
        ]));

        return 0;
    }
}
