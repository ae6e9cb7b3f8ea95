<?php

namespace App\Models;

use Illuminate\Database\Eloquent\Model;

class Customer extends Model
{
    protected $table = 'interop_customers';

    protected $guarded = [];

    public $timestamps = false;
}
