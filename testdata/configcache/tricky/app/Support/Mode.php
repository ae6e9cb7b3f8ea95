<?php

namespace App\Support;

// A backed enum in config: var_export writes \App\Support\Mode::Fast.
enum Mode: string
{
    case Fast = 'fast';
}
