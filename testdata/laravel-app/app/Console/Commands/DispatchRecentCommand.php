<?php

namespace App\Console\Commands;

use App\Jobs\EmailCustomer;
use App\Jobs\PackParcel;
use App\Jobs\RebuildSearchIndex;
use App\Models\Customer;
use Illuminate\Support\Facades\Bus;
use RuntimeException;

// Queues the jobs whose failed rows changed shape in Laravel 10–13, each
// failing until INTEROP_FLAG_FILE exists, and writes a manifest like
// interop:dispatch: a timeout (TimeoutExceededException from 10), one
// queued closure twice (PHP 8.4 names closures in frames), a batched job
// (data.batchId), a unique job (illuminate:log:context) and a delayed job
// carrying a model with deleteWhenMissingModels (13's payload key). Each
// entry says which of 13's payload keys its row must carry: null where the
// running Laravel writes none.
class DispatchRecentCommand extends DispatchCommand
{
    protected $signature = 'interop:dispatch-recent {--manifest= : path of the manifest JSON to write}';

    protected $description = 'Queue the jobs whose failed rows Laravel 10-13 changed and write a manifest';

    public function handle()
    {
        $manifestPath = (string) $this->option('manifest');
        if ($manifestPath === '') {
            $this->error('--manifest is required');

            return 2;
        }
        // Laravel 13 writes deleteWhenMissingModels into every object
        // payload; createdAt, delay and data.batchId came in 12.
        $has13Keys = version_compare(app()->version(), '13.0', '>=');
        $keys = fn (bool $deletes, ?int $delay = null) => $has13Keys
            ? ['delete_when_missing_models' => $deletes, 'created_at' => true, 'delay' => $delay]
            : [];

        $this->dispatchTimeout($keys(false));

        // One closure failing twice with different data: one cause.
        foreach (['OPS-9', 'OPS-10'] as $ticket) {
            $this->dispatchClosure('queued-closure-'.$ticket, $ticket, $keys(true));
        }

        $batch = Bus::batch([new PackParcel('PCL-7')])->name('interop parcels')->dispatch();
        $this->expect('pack-parcel-batched', PackParcel::class, 'default', RuntimeException::class, PackParcel::failureMessage('PCL-7'),
            ['parcel' => 'PCL-7'], $keys(false) + ($has13Keys ? ['batch_id' => $batch->id] : []));

        RebuildSearchIndex::dispatch('products');
        $this->expect('rebuild-search-index-unique', RebuildSearchIndex::class, 'default', RuntimeException::class,
            RebuildSearchIndex::failureMessage('products'), ['index' => 'products'], $keys(false) + ['unique_id' => 'products']);

        $customer = Customer::create(['email' => 'ana.souza@example.test']);
        EmailCustomer::dispatch($customer)->delay(1);
        $this->expect('email-customer-delayed', EmailCustomer::class, 'default', RuntimeException::class,
            EmailCustomer::failureMessage('ana.souza@example.test'), ['customer_id' => (int) $customer->id],
            $keys(true, 1) + ['customer_id' => (int) $customer->id]);

        return $this->writeManifest($manifestPath);
    }
}
