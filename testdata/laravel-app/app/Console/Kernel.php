<?php

namespace App\Console;

use Illuminate\Foundation\Console\Kernel as ConsoleKernel;

class Kernel extends ConsoleKernel
{
    protected $commands = [
        Commands\ResetSchemaCommand::class,
        Commands\DispatchCommand::class,
        Commands\StatusCommand::class,
        Commands\ExportFailedCommand::class,
        Commands\DispatchRedisCommand::class,
        Commands\DispatchOrdersCommand::class,
        Commands\DispatchRecentCommand::class,
    ];
}
