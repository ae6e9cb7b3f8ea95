<?php

namespace App\Events;

class OrderShipped
{
    public function __construct(public int $orderId, public string $carrier)
    {
    }
}
