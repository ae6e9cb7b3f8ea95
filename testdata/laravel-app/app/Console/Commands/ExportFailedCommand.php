<?php

namespace App\Console\Commands;

use Illuminate\Console\Command;
use Illuminate\Support\Facades\DB;

// Dumps failed_jobs exactly as the driver returns it (failed_at stays the
// stored wall-clock text) for jobtriage's parsing fixtures.
class ExportFailedCommand extends Command
{
    protected $signature = 'interop:export-failed {path : where to write the JSON array}';

    protected $description = 'Write every failed_jobs row, oldest first, as a JSON array';

    public function handle()
    {
        $rows = DB::table('failed_jobs')->orderBy('id')->get()->map(function ($row) {
            return [
                'id' => (int) $row->id,
                'uuid' => $row->uuid,
                'connection' => $row->connection,
                'queue' => $row->queue,
                'payload' => $row->payload,
                'exception' => $row->exception,
                'failed_at' => $row->failed_at,
            ];
        })->all();
        $json = json_encode($rows, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);
        if (file_put_contents($this->argument('path'), $json."\n") === false) {
            $this->error('cannot write '.$this->argument('path'));

            return 1;
        }
        $this->info(count($rows).' rows written to '.$this->argument('path'));

        return 0;
    }
}
