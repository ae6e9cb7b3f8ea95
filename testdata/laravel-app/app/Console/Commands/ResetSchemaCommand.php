<?php

namespace App\Console\Commands;

use Illuminate\Console\Command;
use Illuminate\Database\Schema\Blueprint;
use Illuminate\Support\Facades\Schema;

// Drops and recreates the queue tables with Laravel's own schema builder,
// column for column as the 8.83 stubs (queue:table, queue:failed-table,
// queue:batches-table) write them, so every dialect gets the real DDL.
class ResetSchemaCommand extends Command
{
    protected $signature = 'interop:reset';

    protected $description = 'Drop and recreate jobs, failed_jobs, job_batches and interop_customers';

    public function handle()
    {
        $schema = Schema::connection(config('database.default'));
        foreach (['jobs', 'failed_jobs', 'job_batches', 'interop_customers'] as $table) {
            $schema->dropIfExists($table);
        }

        $schema->create('jobs', function (Blueprint $table) {
            $table->bigIncrements('id');
            $table->string('queue')->index();
            $table->longText('payload');
            $table->unsignedTinyInteger('attempts');
            $table->unsignedInteger('reserved_at')->nullable();
            $table->unsignedInteger('available_at');
            $table->unsignedInteger('created_at');
        });
        // INTEROP_FAILED_SCHEMA=legacy: the 7.x stub, without the uuid
        // column (an app that never ran the 8.0 upgrade, with
        // queue.failed.driver "database").
        $legacy = env('INTEROP_FAILED_SCHEMA') === 'legacy';
        $schema->create('failed_jobs', function (Blueprint $table) use ($legacy) {
            $table->id();
            if (! $legacy) {
                $table->string('uuid')->unique();
            }
            $table->text('connection');
            $table->text('queue');
            $table->longText('payload');
            $table->longText('exception');
            $table->timestamp('failed_at')->useCurrent();
        });
        $schema->create('job_batches', function (Blueprint $table) {
            $table->string('id')->primary();
            $table->string('name');
            $table->integer('total_jobs');
            $table->integer('pending_jobs');
            $table->integer('failed_jobs');
            $table->text('failed_job_ids');
            $table->mediumText('options')->nullable();
            $table->integer('cancelled_at')->nullable();
            $table->integer('created_at');
            $table->integer('finished_at')->nullable();
        });
        $schema->create('interop_customers', function (Blueprint $table) {
            $table->id();
            $table->string('email');
        });

        $this->info('queue tables recreated on '.config('database.default'));

        return 0;
    }
}
