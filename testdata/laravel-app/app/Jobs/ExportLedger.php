<?php

namespace App\Jobs;

use App\Interop\Outcome;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;
use RuntimeException;

// Overrides displayName(), so the payload's displayName is not a class name.
class ExportLedger implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public function __construct(public string $period)
    {
    }

    public function displayName()
    {
        return 'ledger-export:'.$this->period;
    }

    public function handle()
    {
        if (! Outcome::flagIsSet()) {
            throw new RuntimeException('disk quota exceeded while writing /exports/'.$this->period.'.csv');
        }
        Outcome::record(static::class, ['period' => $this->period]);
    }
}
