<?php

namespace App\Exceptions;

use RuntimeException;

// An application exception class, so the "top exception class" a triage tool
// reports is not always a PHP built-in.
class PaymentGatewayException extends RuntimeException
{
}
