/* hwsync: thread synchronization that knows the hardware it waits on. */
#ifndef HWSYNC_H
#define HWSYNC_H
#include <hwsync/arch.h>
#include <hwsync/wait.h>
#include <hwsync/lock.h>
#include <hwsync/barrier.h>
#include <hwsync/event.h>
#include <hwsync/condvar.h>
#include <hwsync/sem.h>
#include <hwsync/rwlock.h>
#include <hwsync/topo.h>
#endif
