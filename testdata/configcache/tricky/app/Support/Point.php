<?php

namespace App\Support;

// An object in config: var_export writes \App\Support\Point::__set_state(array(...)).
class Point
{
    public $x;
    public $y;

    public static function make($x, $y)
    {
        $p = new self;
        $p->x = $x;
        $p->y = $y;

        return $p;
    }

    public static function __set_state(array $state)
    {
        return self::make($state['x'], $state['y']);
    }
}
