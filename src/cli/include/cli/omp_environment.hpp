// OMP_NUM_THREADS as the user set it, kept from before libgomp's start-up could complain about it.
#pragma once

namespace kvbench {

// The value OMP_NUM_THREADS had when the process started, or nullptr when it was unset. A value
// libgomp cannot use has been taken out of the environment before libgomp read it, so that
// default_thread_count() refuses it in one line of kvbench's own, with no line of libgomp's
// before it; a value libgomp takes stays where it was.
const char* omp_num_threads_at_start();

}  // namespace kvbench
