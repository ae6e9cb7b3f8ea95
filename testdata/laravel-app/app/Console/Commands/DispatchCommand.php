<?php

namespace App\Console\Commands;

use App\Events\OrderShipped;
use App\Exceptions\PaymentGatewayException;
use App\Jobs\ChargeCard;
use App\Jobs\ExportLedger;
use App\Jobs\ImportFeed;
use App\Jobs\RenderReport;
use App\Jobs\SendNewsletter;
use App\Jobs\SyncCustomer;
use App\Jobs\SyncInvoice;
use App\Models\Customer;
use Illuminate\Console\Command;
use Illuminate\Queue\MaxAttemptsExceededException;
use Illuminate\Support\Facades\DB;
use Illuminate\Support\Facades\Queue;
use Illuminate\Support\Facades\Redis;
use ReflectionFunction;
use RuntimeException;

// Dispatches one job per failure mode on two queues and writes a manifest of
// what a triage tool must report once a worker has failed them all. Each entry
// is tied to its payload uuid by reading back the row the dispatch inserted.
class DispatchCommand extends Command
{
    protected $signature = 'interop:dispatch {--manifest= : path of the manifest JSON to write} {--retry-until-seconds=3 : lifetime of the retryUntil-bounded job}';

    protected $description = 'Queue the interop jobs (all fail until INTEROP_FLAG_FILE exists) and write a manifest';

    protected array $failures = [];

    public function handle()
    {
        $manifestPath = (string) $this->option('manifest');
        if ($manifestPath === '') {
            $this->error('--manifest is required');

            return 2;
        }
        $retryUntilSeconds = (int) $this->option('retry-until-seconds');
        if ($retryUntilSeconds < 1) {
            $this->error('--retry-until-seconds must be a positive integer');

            return 2;
        }
        if (config('queue.default') !== 'redis' && DB::table('jobs')->count() > 0) {
            $this->error('the jobs table is not empty; run interop:reset first');

            return 1;
        }

        $maxAttempts = MaxAttemptsExceededException::class;
        [$tooMany] = $this->attemptTexts();

        // First, because its retryUntil clock starts now.
        ImportFeed::dispatch('https://feeds.example.test/katalog.xml', $retryUntilSeconds);
        $this->expect('import-feed-retry-until', ImportFeed::class, 'default', $maxAttempts, ImportFeed::class.$tooMany,
            ['feed_url' => 'https://feeds.example.test/katalog.xml'], ['retry_until_expires' => true]);

        foreach ([[1001, 129900, 'UAH', 'default'], [1002, 4500000, 'IDR', 'default'], [1003, 1999, 'EUR', 'emails']] as [$order, $amount, $currency, $queue]) {
            ChargeCard::dispatch($order, $amount, $currency)->onQueue($queue);
            $this->expect('charge-card-'.$order, ChargeCard::class, $queue, RuntimeException::class, ChargeCard::failureMessage($order),
                ['order_id' => $order, 'amount_cents' => $amount, 'currency' => $currency]);
        }

        SyncInvoice::dispatch('INV-2026-0042');
        $this->expect('sync-invoice-chained', SyncInvoice::class, 'default', PaymentGatewayException::class,
            SyncInvoice::failureMessage('INV-2026-0042'), ['invoice_number' => 'INV-2026-0042'], ['previous_exception_class' => \LogicException::class]);

        $this->dispatchTimeout();

        SendNewsletter::dispatch(31, 'ops@example.test')->onQueue('emails');
        $this->expect('send-newsletter-encrypted', SendNewsletter::class, 'emails', RuntimeException::class,
            SendNewsletter::failureMessage('ops@example.test'), ['newsletter_id' => 31, 'recipient' => 'ops@example.test'], ['encrypted' => true]);

        ExportLedger::dispatch('2026-Q3');
        $this->expect('export-ledger-display-name', 'ledger-export:2026-Q3', 'default', RuntimeException::class,
            'disk quota exceeded while writing /exports/2026-Q3.csv', ['period' => '2026-Q3'], ['command_name' => ExportLedger::class]);

        $customer = Customer::create(['email' => 'dewi.lestari@example.test']);
        SyncCustomer::dispatch($customer);
        $this->expect('sync-customer-model', SyncCustomer::class, 'default', RuntimeException::class,
            'CRM timeout after 30s while syncing customer dewi.lestari@example.test',
            ['customer_id' => (int) $customer->id, 'email' => 'dewi.lestari@example.test']);

        $this->dispatchClosure('queued-closure', 'OPS-9');

        event(new OrderShipped(5005, 'JNE'));
        $this->expect('queued-listener', \App\Listeners\NotifyWarehouse::class, 'emails', RuntimeException::class,
            'warehouse API returned 503 for order 5005 via JNE', ['order_id' => 5005, 'carrier' => 'JNE'],
            ['command_name' => \Illuminate\Events\CallQueuedListener::class]);

        Queue::push('App\Jobs\LegacyHandler@handle', ['record' => 'R-77'], 'default');
        $this->expect('legacy-string-job', \App\Jobs\LegacyHandler::class, 'default', RuntimeException::class,
            'legacy handler refused record R-77', ['record' => 'R-77'], ['job' => 'App\Jobs\LegacyHandler@handle']);

        return $this->writeManifest($manifestPath);
    }

    // attemptTexts: what the worker writes for a job attempted too often
    // and for a killed (timed-out) one: 8.x fails the latter on the next
    // attempt as "attempted too many times"; 10+ fails it at once with
    // TimeoutExceededException::forJob. MaxAttemptsExceededException lost
    // "or run too long…" in 10 too.
    protected function attemptTexts(): array
    {
        if (version_compare(app()->version(), '10.0', '>=')) {
            return [' has been attempted too many times.', \Illuminate\Queue\TimeoutExceededException::class, ' has timed out.'];
        }
        $tooMany = ' has been attempted too many times or run too long. The job may have previously timed out.';

        return [$tooMany, MaxAttemptsExceededException::class, $tooMany];
    }

    // dispatchTimeout queues RenderReport, which runs past its timeout.
    protected function dispatchTimeout(array $extra = []): void
    {
        [, $timedOut, $timedOutText] = $this->attemptTexts();
        RenderReport::dispatch(7, 'pdf');
        $this->expect('render-report-timeout', RenderReport::class, 'default', $timedOut, RenderReport::class.$timedOutText,
            ['report_id' => 7, 'format' => 'pdf'], ['kills_worker' => true] + $extra);
    }

    // dispatchClosure queues a closure that fails for $ticket. Every call
    // queues the same closure: one definition, so one displayName.
    protected function dispatchClosure(string $key, string $ticket, array $extra = []): void
    {
        $closure = function () use ($ticket) {
            if (! \App\Interop\Outcome::flagIsSet()) {
                throw new \RuntimeException('escalation for ticket '.$ticket.' failed');
            }
            \App\Interop\Outcome::record('Closure', ['ticket' => $ticket]);
        };
        dispatch($closure)->onQueue('emails');
        $reflection = new ReflectionFunction($closure);
        $this->expect($key, 'Closure ('.basename($reflection->getFileName()).':'.$reflection->getStartLine().')', 'emails',
            RuntimeException::class, 'escalation for ticket '.$ticket.' failed', ['ticket' => $ticket],
            ['command_name' => \Illuminate\Queue\CallQueuedClosure::class, 'result_class' => 'Closure'] + $extra);
    }

    // writeManifest writes what the dispatch expected, for the Go test.
    protected function writeManifest(string $manifestPath): int
    {
        $manifest = [
            'laravel_version' => app()->version(),
            'php_version' => PHP_VERSION,
            'db_connection' => config('database.default'),
            'timezone' => config('app.timezone'),
            'dispatched_at' => gmdate('Y-m-d\TH:i:s\Z'),
            'failures' => $this->failures,
        ];
        $json = json_encode($manifest, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);
        if (file_put_contents($manifestPath, $json."\n") === false) {
            $this->error('cannot write '.$manifestPath);

            return 1;
        }
        $this->info(count($this->failures).' jobs dispatched; manifest written to '.$manifestPath);

        return 0;
    }

    // expect records what the newest jobs row must become in failed_jobs.
    protected function expect(string $key, string $class, string $queue, string $exceptionClass, string $message, array $args, array $extra = []): void
    {
        if (config('queue.default') === 'redis') {
            // On Redis the newest job is the tail of one of the queue lists
            // (RPUSH); the facade applies the key prefix.
            $row = null;
            foreach (['default', 'emails'] as $name) {
                $raw = Redis::connection(config('queue.connections.redis.connection'))->lindex('queues:'.$name, -1);
                if ($raw === false || $raw === null) {
                    continue;
                }
                $candidate = json_decode($raw, true, 512, JSON_THROW_ON_ERROR);
                $fresh = true;
                foreach ($this->failures as $seen) {
                    $fresh = $fresh && $seen['uuid'] !== $candidate['uuid'];
                }
                if ($fresh) {
                    $row = (object) ['payload' => $raw, 'queue' => $name];
                }
            }
        } else {
            $row = DB::table('jobs')->orderByDesc('id')->first();
        }
        if ($row === null) {
            throw new RuntimeException("dispatching {$key} inserted no jobs row");
        }
        $payload = json_decode($row->payload, true, 512, JSON_THROW_ON_ERROR);
        foreach ($this->failures as $seen) {
            if ($seen['uuid'] === $payload['uuid']) {
                throw new RuntimeException("dispatching {$key} inserted no new jobs row");
            }
        }
        if ($row->queue !== $queue) {
            throw new RuntimeException("{$key} landed on queue {$row->queue}, expected {$queue}");
        }
        $this->failures[] = array_merge([
            'key' => $key,
            'uuid' => $payload['uuid'],
            'class' => $class,
            'queue' => $queue,
            'connection' => config('queue.default'),
            'exception_class' => $exceptionClass,
            'exception_message' => $message,
            'result' => ['class' => $this->resultClass($class, $extra), 'args' => (object) $args],
        ], array_diff_key($extra, ['result_class' => true]));
    }

    private function resultClass(string $class, array $extra): string
    {
        if (isset($extra['result_class'])) {
            return $extra['result_class'];
        }
        if (isset($extra['command_name']) && ! str_starts_with($extra['command_name'], 'Illuminate\\')) {
            return $extra['command_name'];
        }

        return $class;
    }
}
