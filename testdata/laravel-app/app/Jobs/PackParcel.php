<?php

namespace App\Jobs;

use App\Interop\Outcome;
use Illuminate\Bus\Batchable;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;
use RuntimeException;

// A job of a batch (Bus::batch): Laravel 13 writes the batch id into the
// payload as data.batchId, older releases only inside the command.
class PackParcel implements ShouldQueue
{
    use Batchable, Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public $tries = 1;

    public function __construct(public string $parcel)
    {
    }

    public function handle()
    {
        if (! Outcome::flagIsSet()) {
            throw new RuntimeException(static::failureMessage($this->parcel));
        }
        Outcome::record(static::class, ['parcel' => $this->parcel]);
    }

    public static function failureMessage(string $parcel): string
    {
        return "no courier accepts parcel {$parcel}";
    }
}
