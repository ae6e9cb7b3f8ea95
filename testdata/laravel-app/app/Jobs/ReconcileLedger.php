<?php

namespace App\Jobs;

use App\Interop\Outcome;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;
use RuntimeException;

// Releases itself on the first attempt (on Redis the released payload is
// re-encoded by cjson) and fails on the second, unless the flag is set.
class ReconcileLedger implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public $tries = 2;

    public function __construct(public string $account, public array $entries)
    {
    }

    public function handle()
    {
        if (Outcome::flagIsSet()) {
            Outcome::record(static::class, ['account' => $this->account]);

            return;
        }
        if ($this->attempts() < 2) {
            $this->release(1);

            return;
        }
        throw new RuntimeException(static::failureMessage($this->account));
    }

    public function tags()
    {
        return ['ledger:'.$this->account];
    }

    public static function failureMessage(string $account): string
    {
        return "ledger {$account} is out of balance by 12.50 after 2 attempts";
    }
}
