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

// Carries a model and deletes itself when the model is gone: Laravel 13
// writes deleteWhenMissingModels into the payload, and its worker deletes
// such a job, with no failure row, when the model cannot be restored.
class EmailCustomer implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public $tries = 1;

    public $deleteWhenMissingModels = true;

    public function __construct(public Customer $customer)
    {
    }

    public function handle()
    {
        if (! Outcome::flagIsSet()) {
            throw new RuntimeException(static::failureMessage($this->customer->email));
        }
        Outcome::record(static::class, ['customer_id' => (int) $this->customer->id]);
    }

    public static function failureMessage(string $email): string
    {
        return "mailbox {$email} is over quota";
    }
}
