<?php

namespace App\Jobs;

use App\Interop\Outcome;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

// Times out: with $timeout = 1 the worker's SIGALRM handler fails it with
// MaxAttemptsExceededException (tries = 1) and then kills the worker itself.
class RenderReport implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public $tries = 1;

    public $timeout = 1;

    public function __construct(public int $reportId, public string $format)
    {
    }

    public function handle()
    {
        if (! Outcome::flagIsSet()) {
            sleep(10);
        }
        Outcome::record(static::class, ['report_id' => $this->reportId, 'format' => $this->format]);
    }
}
