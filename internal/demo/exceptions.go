package demo

import (
	"strconv"
	"strings"
)

// Where the demo application lives, as on a typical deployment.
const (
	appRoot     = "/var/www/app/"
	vendorRoot  = "/var/www/app/vendor/laravel/framework/src/Illuminate/"
	symfonyRoot = "/var/www/app/vendor/symfony/console/"
)

// frame is a stack-trace line without its "#n " index.
type frame string

func frameIn(root string) func(file string, line int, call string) frame {
	return func(file string, line int, call string) frame {
		return frame(root + file + "(" + strconv.Itoa(line) + "): " + call)
	}
}

func vendorFrame(file string, line int, call string) frame {
	return frameIn(vendorRoot)(file, line, call)
}
func symfonyFrame(file string, line int, call string) frame {
	return frameIn(symfonyRoot)(file, line, call)
}
func appFrame(file string, line int, call string) frame { return frameIn(appRoot)(file, line, call) }

// thrown is an exception of a chain, innermost (previous) first as PHP
// prints them.
type thrown struct {
	class, message, file string
	line                 int
	frames               []frame
}

// render writes the chain as Throwable::__toString does: blocks "Class:
// message in file:line\nStack trace:\n#0 …\n#n {main}" joined by "\n\nNext ".
func render(chain []thrown) string { return renderCapped(chain, -1) }

// renderCapped renders at most maxFrames frames per block (all when < 0):
// how ExceptionSize shrinks a trace.
func renderCapped(chain []thrown, maxFrames int) string {
	var b strings.Builder
	for i, t := range chain {
		if i > 0 {
			b.WriteString("\n\nNext ")
		}
		b.WriteString(t.class)
		if t.message != "" {
			b.WriteString(": ")
			b.WriteString(t.message)
		}
		b.WriteString(" in " + t.file + ":" + strconv.Itoa(t.line) + "\nStack trace:\n")
		frames := t.frames
		if maxFrames >= 0 && len(frames) > maxFrames {
			frames = frames[:maxFrames]
		}
		for j, f := range frames {
			b.WriteString("#" + strconv.Itoa(j) + " " + string(f) + "\n")
		}
		b.WriteString("#" + strconv.Itoa(len(frames)) + " {main}")
	}
	return b.String()
}

// containerCall is how the container invokes a handle() method.
func containerCall(call string) []frame {
	return []frame{
		vendorFrame("Container/BoundMethod.php", 36, call),
		vendorFrame("Container/Util.php", 40, `Illuminate\Container\BoundMethod::Illuminate\Container\{closure}()`),
		vendorFrame("Container/BoundMethod.php", 93, `Illuminate\Container\Util::unwrapIfClosure()`),
		vendorFrame("Container/BoundMethod.php", 35, `Illuminate\Container\BoundMethod::callBoundMethod()`),
		vendorFrame("Container/Container.php", 653, `Illuminate\Container\BoundMethod::call()`),
	}
}

// middlewareFrames is what one job middleware adds; padding repeats it.
func middlewareFrames(middleware string) []frame {
	return []frame{
		vendorFrame("Pipeline/Pipeline.php", 167, middleware+"->handle()"),
		vendorFrame("Pipeline/Pipeline.php", 128, `Illuminate\Pipeline\Pipeline->Illuminate\Pipeline\{closure}()`),
	}
}

// dispatchFrames lead from the job's handle() down to CallQueuedHandler.
func dispatchFrames(handleCall string, middlewares int) []frame {
	fs := containerCall(handleCall)
	fs = append(fs,
		vendorFrame("Bus/Dispatcher.php", 128, `Illuminate\Container\Container->call()`),
		vendorFrame("Pipeline/Pipeline.php", 128, `Illuminate\Bus\Dispatcher->Illuminate\Bus\{closure}()`),
		vendorFrame("Pipeline/Pipeline.php", 103, `Illuminate\Pipeline\Pipeline->Illuminate\Pipeline\{closure}()`),
		vendorFrame("Bus/Dispatcher.php", 132, `Illuminate\Pipeline\Pipeline->then()`),
		vendorFrame("Queue/CallQueuedHandler.php", 119, `Illuminate\Bus\Dispatcher->dispatchNow()`),
		vendorFrame("Pipeline/Pipeline.php", 128, `Illuminate\Queue\CallQueuedHandler->Illuminate\Queue\{closure}()`),
	)
	for i := 0; i < middlewares; i++ {
		fs = append(fs, middlewareFrames(middlewareNames[i%len(middlewareNames)])...)
	}
	return append(fs,
		vendorFrame("Pipeline/Pipeline.php", 103, `Illuminate\Pipeline\Pipeline->Illuminate\Pipeline\{closure}()`),
		vendorFrame("Queue/CallQueuedHandler.php", 118, `Illuminate\Pipeline\Pipeline->then()`),
		vendorFrame("Queue/CallQueuedHandler.php", 70, `Illuminate\Queue\CallQueuedHandler->dispatchThroughMiddleware()`),
		vendorFrame("Queue/Jobs/Job.php", 98, `Illuminate\Queue\CallQueuedHandler->call()`),
	)
}

var middlewareNames = []string{
	`Illuminate\Queue\Middleware\WithoutOverlapping`,
	`Illuminate\Queue\Middleware\RateLimited`,
	`App\Jobs\Middleware\TenantContext`,
	`Illuminate\Queue\Middleware\ThrottlesExceptions`,
}

// workerFrames is the bottom of every trace: queue:work running the job.
func workerFrames() []frame {
	fs := []frame{
		vendorFrame("Queue/Worker.php", 428, `Illuminate\Queue\Jobs\Job->fire()`),
		vendorFrame("Queue/Worker.php", 378, `Illuminate\Queue\Worker->process()`),
		vendorFrame("Queue/Worker.php", 172, `Illuminate\Queue\Worker->runJob()`),
		vendorFrame("Queue/Console/WorkCommand.php", 116, `Illuminate\Queue\Worker->daemon()`),
		vendorFrame("Queue/Console/WorkCommand.php", 100, `Illuminate\Queue\Console\WorkCommand->runWorker()`),
	}
	fs = append(fs, containerCall(`Illuminate\Queue\Console\WorkCommand->handle()`)...)
	return append(fs,
		vendorFrame("Console/Command.php", 136, `Illuminate\Container\Container->call()`),
		symfonyFrame("Command/Command.php", 298, `Illuminate\Console\Command->execute()`),
		vendorFrame("Console/Command.php", 120, `Symfony\Component\Console\Command\Command->run()`),
		symfonyFrame("Application.php", 1040, `Illuminate\Console\Command->run()`),
		symfonyFrame("Application.php", 301, `Symfony\Component\Console\Application->doRunCommand()`),
		symfonyFrame("Application.php", 171, `Symfony\Component\Console\Application->doRun()`),
		vendorFrame("Console/Application.php", 94, `Symfony\Component\Console\Application->run()`),
		vendorFrame("Foundation/Console/Kernel.php", 129, `Illuminate\Console\Application->run()`),
		appFrame("artisan", 37, `Illuminate\Foundation\Console\Kernel->handle()`),
	)
}

// jobTrace is the trace of an exception thrown in a job's handle(), lead
// being the frames above it.
func jobTrace(lead []frame, handleCall string, middlewares int) []frame {
	fs := append([]frame{}, lead...)
	fs = append(fs, dispatchFrames(handleCall, middlewares)...)
	return append(fs, workerFrames()...)
}

// maxAttemptsMessage is Laravel 8.x's MaxAttemptsExceededException message.
func maxAttemptsMessage(name string) string {
	return name + " has been attempted too many times or run too long. The job may have previously timed out."
}

// maxAttemptsBeforeRun is what a worker records when retryUntil passed
// (or the tries are used up) before the job runs.
func maxAttemptsBeforeRun(name string) thrown {
	fs := []frame{
		vendorFrame("Queue/Worker.php", 504, `Illuminate\Queue\Worker->maxAttemptsExceededException()`),
		vendorFrame("Queue/Worker.php", 417, `Illuminate\Queue\Worker->markJobAsFailedIfAlreadyExceedsMaxAttempts()`),
	}
	fs = append(fs, workerFrames()[1:]...)
	return thrown{class: `Illuminate\Queue\MaxAttemptsExceededException`, message: maxAttemptsMessage(name),
		file: vendorRoot + "Queue/Worker.php", line: 750, frames: fs}
}
