<?php

namespace App\Jobs;

use App\Interop\Outcome;
use App\Models\Customer;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;
use RuntimeException;

// Carries an Eloquent model: SerializesModels stores only its identifier, and
// the worker reloads the row when the job runs again.
class SyncCustomer implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public function __construct(public Customer $customer)
    {
    }

    public function handle()
    {
        if (! Outcome::flagIsSet()) {
            throw new RuntimeException('CRM timeout after 30s while syncing customer '.$this->customer->email);
        }
        Outcome::record(static::class, ['customer_id' => (int) $this->customer->id, 'email' => $this->customer->email]);
    }
}
