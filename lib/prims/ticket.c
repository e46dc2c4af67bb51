/* Ticket lock: generic table (algorithm in lock_ticket.h). */
#include "prims/lock_ops.h"
#include <hwsync/lock_ticket.h>

HWS_LOCK_OPS_INLINE(ticket)
