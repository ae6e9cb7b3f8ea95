<?php

namespace App\Providers;

use Illuminate\Support\ServiceProvider;

// Stub: the skeleton's config/app.php lists this provider; config:cache only
// needs it to exist.
class AuthServiceProvider extends ServiceProvider
{
}
