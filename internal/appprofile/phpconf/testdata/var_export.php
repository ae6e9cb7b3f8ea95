<?php return array (
  'f' => 
  array (
    0 => 1.5,
    1 => 1.0E+25,
    2 => -0.0,
    3 => NAN,
    4 => INF,
    5 => -INF,
    6 => 0.1,
    7 => 1.0E-7,
    8 => 100.0,
  ),
  'i' => 
  array (
    0 => -9223372036854775807-1,
    1 => 9223372036854775807,
    2 => -3,
    3 => 0,
  ),
  's' => 
  array (
    0 => 'a' . "\0" . 'b',
    1 => '' . "\0" . '',
    2 => 'it\'s \\ x',
    3 => '' . "\0" . '' . "\0" . '',
    4 => 'multi
line',
    5 => 'ü',
  ),
  -7 => true,
  3 => false,
  'n' => NULL,
  'x' => 
  \Suit::Hearts,
  'o' => 
  \Foo::__set_state(array(
     'a' => 1,
  )),
  'so' => 
  (object) array(
     'k' => 
    array (
      0 => 1,
    ),
  ),
  'e' => 
  array (
  ),
  'after' => 'ok',
);
