<?php

namespace App\Console\Commands;

use App\Jobs\ReconcileLedger;
use App\Notifications\InvoicePaid;
use Illuminate\Console\Command;
use Illuminate\Support\Facades\Notification;
use Illuminate\Support\Facades\Queue;
use RuntimeException;

// Queues, on the redis connection, jobs that are released once and then
// fail, so that the payload failed_jobs receives is the one Redis's cjson
// re-encoded (keys in hash order). With INTEROP_HORIZON_KEYS=1 the payloads
// carry Horizon's keys too. Writes a manifest like interop:dispatch.
class DispatchRedisCommand extends Command
{
    protected $signature = 'interop:dispatch-redis {--manifest= : path of the manifest JSON to write}';

    protected $description = 'Queue the Redis interop jobs (released once, then failed) and write a manifest';

    private array $failures = [];

    public function handle()
    {
        $manifestPath = (string) $this->option('manifest');
        if ($manifestPath === '') {
            $this->error('--manifest is required');

            return 2;
        }
        if (config('queue.default') !== 'redis') {
            $this->error('QUEUE_CONNECTION must be redis, not '.config('queue.default'));

            return 2;
        }
        $queue = Queue::connection('redis');
        foreach (['default', 'emails'] as $name) {
            if ($queue->size($name) > 0) {
                $this->error("the redis queue {$name} is not empty; pick a fresh REDIS_PREFIX");

                return 1;
            }
        }

        $lines = [];
        for ($i = 1; $i <= 24; $i++) {
            $lines[] = ['sku' => sprintf('SKU-%05d', $i * 37), 'description' => "Консультація, година {$i} (проєкт «Північ»)", 'cents' => 12500 + $i];
        }
        foreach ([['INV-2026-0042', 42, 'emails'], ['INV-2026-0043', 43, 'default']] as [$invoice, $customer, $name]) {
            Notification::route(\App\Notifications\Channels\InteropChannel::class, 'ops@example.test')
                ->notify((new InvoicePaid($invoice, $customer, $lines))->onQueue($name));
            $this->expect('invoice-paid-'.$invoice, InvoicePaid::class, $name, RuntimeException::class, InvoicePaid::failureMessage($invoice),
                ['invoice_number' => $invoice, 'customer_id' => $customer], ['command_name' => \Illuminate\Notifications\SendQueuedNotifications::class]);
        }

        ReconcileLedger::dispatch('ACC-7', array_slice($lines, 0, 12));
        $this->expect('reconcile-ledger-released', ReconcileLedger::class, 'default', RuntimeException::class,
            ReconcileLedger::failureMessage('ACC-7'), ['account' => 'ACC-7']);

        $manifest = [
            'laravel_version' => app()->version(),
            'php_version' => PHP_VERSION,
            'db_connection' => config('database.default'),
            'queue_connection' => 'redis',
            'redis_prefix' => config('database.redis.options.prefix'),
            'horizon_keys' => env('INTEROP_HORIZON_KEYS') == '1',
            'timezone' => config('app.timezone'),
            'dispatched_at' => gmdate('Y-m-d\TH:i:s\Z'),
            'failures' => $this->failures,
        ];
        $json = json_encode($manifest, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);
        if (file_put_contents($manifestPath, $json."\n") === false) {
            $this->error('cannot write '.$manifestPath);

            return 1;
        }
        $this->info(count($this->failures).' jobs dispatched on redis; manifest written to '.$manifestPath);

        return 0;
    }

    // expect records what the newest entry of the Redis list must become in
    // failed_jobs; the list holds PHP's JSON, before any cjson re-encoding.
    private function expect(string $key, string $class, string $queue, string $exceptionClass, string $message, array $args, array $extra = []): void
    {
        $raw = Queue::connection('redis')->getConnection()->lrange('queues:'.$queue, -1, -1)[0] ?? null;
        if ($raw === null) {
            throw new RuntimeException("dispatching {$key} pushed nothing onto queues:{$queue}");
        }
        $payload = json_decode($raw, true, 512, JSON_THROW_ON_ERROR);
        foreach ($this->failures as $seen) {
            if ($seen['uuid'] === $payload['uuid']) {
                throw new RuntimeException("dispatching {$key} pushed no new job");
            }
        }
        $this->failures[] = array_merge([
            'key' => $key,
            'uuid' => $payload['uuid'],
            'class' => $class,
            'queue' => $queue,
            'connection' => 'redis',
            'exception_class' => $exceptionClass,
            'exception_message' => $message,
            'result' => ['class' => $class, 'args' => (object) $args],
        ], $extra);
    }
}
