<?php

namespace App\Console\Commands;

use Illuminate\Console\Command;

// The Laravel 11+ app's interop:reset: the queue tables come from the
// migrations Laravel's own make:queue-table, make:queue-failed-table,
// make:queue-batches-table and make:cache-table wrote (database/migrations),
// so every dialect gets the real 11+ schema, including the cache table the
// default database cache store (pause and restart signals) needs.
class ResetSchemaCommand extends Command
{
    protected $signature = 'interop:reset';

    protected $description = 'Drop every table and run the app\'s migrations (jobs, failed_jobs, job_batches, cache, interop_customers)';

    public function handle()
    {
        // The 7.x failed_jobs table of the Laravel 8 app's reset is an
        // upgrade path the 11+ skeleton never had.
        if (env('INTEROP_FAILED_SCHEMA') !== null) {
            $this->error('INTEROP_FAILED_SCHEMA is not supported by the Laravel 11+ app');

            return 2;
        }

        return $this->call('migrate:fresh', ['--force' => true]);
    }
}
