<?php

namespace App\Console\Commands;

use App\Jobs\SettleOrder;
use Illuminate\Console\Command;
use Illuminate\Support\Facades\DB;
use Illuminate\Support\Facades\Queue;
use RuntimeException;

// Queues --count SettleOrder jobs (orders 1..count) on the default queue of
// the default connection (database or redis), all failing until
// INTEROP_FLAG_FILE exists, and writes a manifest like interop:dispatch.
class DispatchOrdersCommand extends Command
{
    protected $signature = 'interop:dispatch-orders {--count=8 : how many orders} {--manifest= : path of the manifest JSON to write}';

    protected $description = 'Queue SettleOrder jobs of one failure signature and write a manifest';

    public function handle()
    {
        $manifestPath = (string) $this->option('manifest');
        $count = (int) $this->option('count');
        if ($manifestPath === '' || $count < 1) {
            $this->error('--manifest and a positive --count are required');

            return 2;
        }
        $connection = config('queue.default');
        $failures = [];
        for ($i = 1; $i <= $count; $i++) {
            SettleOrder::dispatch($i);
            if ($connection === 'redis') {
                $raw = Queue::connection('redis')->getConnection()->lrange('queues:default', -1, -1)[0] ?? null;
            } else {
                $raw = DB::table('jobs')->orderByDesc('id')->value('payload');
            }
            if ($raw === null) {
                throw new RuntimeException("dispatching order {$i} queued nothing");
            }
            $payload = json_decode($raw, true, 512, JSON_THROW_ON_ERROR);
            $failures[] = [
                'key' => 'order-'.$i,
                'uuid' => $payload['uuid'],
                'class' => SettleOrder::class,
                'queue' => 'default',
                'connection' => $connection,
                'exception_class' => RuntimeException::class,
                'exception_message' => 'Payment gateway unavailable while settling order '.$i,
                'result' => ['class' => SettleOrder::class, 'args' => ['order' => $i]],
            ];
        }
        $manifest = [
            'laravel_version' => app()->version(),
            'db_connection' => config('database.default'),
            'timezone' => config('app.timezone'),
            'failures' => $failures,
        ];
        file_put_contents($manifestPath, json_encode($manifest, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR)."\n");
        $this->info($count.' orders dispatched on '.$connection);

        return 0;
    }
}
