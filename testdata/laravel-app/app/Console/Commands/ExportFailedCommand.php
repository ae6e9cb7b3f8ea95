<?php

namespace App\Console\Commands;

use Illuminate\Console\Command;
use Illuminate\Support\Facades\DB;

// Dumps failed_jobs exactly as the driver returns it (failed_at stays the
// stored wall-clock text) for jobtriage's parsing fixtures, optionally with
// the dispatch manifest's expectations attached to each row as "expect".
class ExportFailedCommand extends Command
{
    protected $signature = 'interop:export-failed {path : where to write the JSON array} {--manifest= : interop:dispatch manifest whose expectations to attach to each row}';

    protected $description = 'Write every failed_jobs row, oldest first, as a JSON array';

    public function handle()
    {
        $expectations = [];
        if ($manifestPath = (string) $this->option('manifest')) {
            $manifest = json_decode((string) @file_get_contents($manifestPath), true);
            if (! is_array($manifest) || ! is_array($manifest['failures'] ?? null)) {
                $this->error('cannot read the manifest '.$manifestPath);

                return 1;
            }
            foreach ($manifest['failures'] as $failure) {
                $expectations[$failure['uuid']] = array_intersect_key($failure, array_flip(['key', 'class', 'exception_class', 'exception_message', 'retry_until_expires', 'encrypted']));
            }
        }
        $rows = DB::table('failed_jobs')->orderBy('id')->get()->map(function ($row) use ($expectations) {
            $expect = $expectations[$row->uuid] ?? null;

            return array_filter([
                'id' => (int) $row->id,
                'uuid' => $row->uuid,
                'connection' => $row->connection,
                'queue' => $row->queue,
                'payload' => $row->payload,
                'exception' => $row->exception,
                'failed_at' => $row->failed_at,
                // Not stored by Laravel: what a triage tool must derive from this row.
                'expect' => $expect,
            ], fn ($value) => $value !== null);
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
