/*
 * Preloaded into nginx by NginxAgreementIntegrationTests (LD_PRELOAD), so that the time nginx
 * decides limit_req on and the time it logs are one clock.
 *
 * nginx reads both in ngx_time_update(): $msec (and $request_time) from gettimeofday(), and the
 * limit_req clock (ngx_current_msec) from clock_gettime(CLOCK_MONOTONIC_COARSE), which on Linux
 * moves in whole ticks (4 ms at HZ=250, more when ticks are skipped). A log therefore cannot say
 * which millisecond nginx decided a request at, to within a tick. Here gettimeofday() is the
 * monotonic clock plus a whole number of milliseconds, and the coarse clock read right after it
 * returns the very instant it read, so $msec - $request_time is nginx's decision millisecond
 * exactly. nginx's own code, limit_req included, runs unchanged.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/time.h>
#include <time.h>

static int (*real_clock_gettime)(clockid_t, struct timespec *);
static long long offset_ns;
static __thread struct timespec last;
static __thread int have_last;

__attribute__((constructor)) static void init(void) {
  real_clock_gettime = (int (*)(clockid_t, struct timespec *)) dlsym(RTLD_NEXT, "clock_gettime");
  struct timespec r, m;
  real_clock_gettime(CLOCK_REALTIME, &r);
  real_clock_gettime(CLOCK_MONOTONIC, &m);
  long long d = (r.tv_sec - m.tv_sec) * 1000000000LL + (r.tv_nsec - m.tv_nsec);
  offset_ns = d - d % 1000000LL;
}

int gettimeofday(struct timeval *tv, void *tz) {
  (void) tz;
  struct timespec m;
  real_clock_gettime(CLOCK_MONOTONIC, &m);
  last = m;
  have_last = 1;
  long long ns = m.tv_sec * 1000000000LL + m.tv_nsec + offset_ns;
  tv->tv_sec = ns / 1000000000LL;
  tv->tv_usec = (ns % 1000000000LL) / 1000;
  return 0;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
  if (id == CLOCK_MONOTONIC_COARSE || id == CLOCK_MONOTONIC) {
    if (have_last) {
      *ts = last;
      have_last = 0;
      return 0;
    }
    id = CLOCK_MONOTONIC;
  }
  return real_clock_gettime(id, ts);
}
