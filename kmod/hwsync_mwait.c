// SPDX-License-Identifier: GPL-2.0
/*
 * hwsync_mwait: privileged MONITOR/MWAIT for user-space wait words.
 *
 * The modern form of the "kmem mapper" driver and mwmon_mmap_sleep() system
 * call of [AK08] Sec. 3.  A misc device,
 * /dev/hwsync-mwait, that
 *
 *  - maps an array of monitored lines to user space (mmap), one line each,
 *    aligned and padded to the largest monitor-line size of CPUID leaf 5, so
 *    that a process has as many wait words as it likes and stores to them
 *    directly;
 *  - runs the MONITOR/MWAIT loop on one of those lines, or on any aligned
 *    word of the caller's own memory (its page pinned for the call), until
 *    the word changes, a timeout passes or a signal arrives;
 *  - optionally halts with HLT and wakes a halted waiter with an IPI, the
 *    "spin-loops-halt" baseline the paper compares against.
 *
 * The wait loop, one round:
 *
 *	check word, signal, deadline; cond_resched()	(interrupts on)
 *	interrupts off
 *	MONITOR the word's line				(arm)
 *	re-check word, need_resched, signal		(closes the window
 *							 between check and arm)
 *	STI; MWAIT					(interrupts on again: the
 *							 STI shadow lets a pending
 *							 interrupt end the MWAIT)
 *
 * The time with interrupts off is a few instructions.  MWAIT ends on a store
 * to the line, on any interrupt (timer tick, IPI: a signal or a reschedule
 * request comes as one) or spuriously; each round re-checks everything, so a
 * lost wake-up costs at most one tick.  A finite timeout arms an hrtimer on
 * the waiter's CPU so that the deadline itself is an interrupt.
 *
 * Exit statistics (exit_stats=1, off by default): the same loop, but each
 * MWAIT runs with interrupts still masked and ECX[0]=1, so an interrupt ends
 * it without being taken.  The driver then opens a one-instruction window
 * (STI; NOP; CLI) for whatever is pending and compares this CPU's interrupt
 * counts from before MONITOR with those after the window: unchanged means
 * no interrupt ended that MWAIT, the monitor did.  The line armed is chosen
 * by the same code in both paths, so the statistics test the production
 * arming; test_misarm=1 breaks exactly that choice to show the test fails.
 *
 * Lifetime: every open file holds a reference on the module (fops.owner) and
 * every mapping holds the file, so the module cannot be unloaded while a
 * thread waits in it or a region is mapped: rmmod fails with EBUSY/EAGAIN.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/hrtimer.h>
#include <linux/kernel_stat.h>
#include <linux/log2.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/version.h>
#include <linux/vmalloc.h>
#include <asm/asm.h>
#include <asm/cpufeature.h>
#include <asm/hardirq.h>
#include <asm/mwait.h>
#include <asm/special_insns.h>

#include <hwsync/kmwait_abi.h>

static unsigned int max_lines = 4096;
module_param(max_lines, uint, 0444);
MODULE_PARM_DESC(max_lines, "Most monitored lines one open file may map (default 4096)");

static unsigned int max_total_mib = 64;
module_param(max_total_mib, uint, 0444);
MODULE_PARM_DESC(max_total_mib, "Memory all mapped regions together may use, MiB (default 64)");

static unsigned int mwait_hint;
module_param(mwait_hint, uint, 0444);
MODULE_PARM_DESC(mwait_hint, "MWAIT EAX hint: 0 = C1 (default), others as CPUID leaf 5 allows");

static bool allow_halt = true;
module_param(allow_halt, bool, 0444);
MODULE_PARM_DESC(allow_halt, "Offer the HLT + IPI baseline ioctls (default on)");

static bool exit_stats;
module_param(exit_stats, bool, 0444);
MODULE_PARM_DESC(exit_stats, "Offer HWS_MWAIT_IOC_WAIT_STATS, which classifies every MWAIT exit (debug; default off)");

static bool test_misarm;
module_param(test_misarm, bool, 0444);
MODULE_PARM_DESC(test_misarm, "TEST ONLY: arm MONITOR on the line next to the word, so stores do not wake (default off)");

static bool exit_stats_ok;		/* exit_stats and the CPU can classify */
static unsigned int line_size;		/* stride of the mapped lines */
static unsigned int monitor_min, monitor_max;
static atomic_long_t total_pages;	/* pages of all regions together */

/* halt_slot values: free, claimed by a waiter not halted right now, 1 + CPU */
#define HALT_FREE	0
#define HALT_CLAIMED	(-1)

struct hws_file {
	struct mutex lock;	/* serialises region creation in mmap */
	void *region;		/* vmalloc_user(); published by smp_store_release */
	u32 nlines;		/* lines in region; written before region */
	unsigned long npages;
	atomic_t *halt_slot;	/* one a line */
};

struct hws_waiter {
	const u32 *word;
	u32 expected;
	u64 deadline;		/* ktime_get_ns() clock; U64_MAX = none */
	struct hrtimer timer;	/* fires at deadline on timer_cpu */
	int timer_cpu;		/* -1: not armed */
	atomic_t *halt_slot;	/* NULL: MWAIT; else HLT, publishing the CPU here */
	struct hws_mwait_stats *st;	/* NULL: plain STI; MWAIT; else classify exits */
};

static enum hrtimer_restart hws_deadline_fn(struct hrtimer *timer)
{
	return HRTIMER_NORESTART;	/* the interrupt itself ended the MWAIT or HLT */
}

static void hws_timer_init(struct hws_waiter *w)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
	hrtimer_setup_on_stack(&w->timer, hws_deadline_fn, CLOCK_MONOTONIC,
			       HRTIMER_MODE_ABS_PINNED);
#else
	hrtimer_init_on_stack(&w->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_PINNED);
	w->timer.function = hws_deadline_fn;
#endif
	w->timer_cpu = -1;
}

/* Keep the deadline timer on the CPU the waiter runs on (it may migrate). */
static void hws_timer_follow(struct hws_waiter *w)
{
	int cpu = get_cpu();

	if (cpu != w->timer_cpu) {
		hrtimer_start(&w->timer, ns_to_ktime(w->deadline), HRTIMER_MODE_ABS_PINNED);
		w->timer_cpu = cpu;
	}
	put_cpu();
}

static bool hws_must_stop(const struct hws_waiter *w)
{
	return READ_ONCE(*w->word) != w->expected || need_resched() ||
	       signal_pending(current);
}

/*
 * Interrupts this CPU has taken: device interrupts (kstat) and the x86
 * system vectors (timer, IPIs, NMIs...), the per-CPU counters the kernel
 * adds up for /proc/stat.  Only compared with itself on the same CPU.
 */
static unsigned long hws_irq_count(void)
{
	const irq_cpustat_t *s = this_cpu_ptr(&irq_stat);
	unsigned long n = __this_cpu_read(kstat.irqs_sum);

	n += s->__nmi_count + s->x86_platform_ipis + s->apic_perf_irqs +
	     s->apic_irq_work_irqs + s->irq_tlb_count;
#ifdef CONFIG_X86_LOCAL_APIC
	n += s->apic_timer_irqs + s->irq_spurious_count;
#endif
#ifdef CONFIG_SMP
	n += s->irq_resched_count + s->irq_call_count;
#endif
#ifdef CONFIG_X86_THERMAL_VECTOR
	n += s->irq_thermal_count;
#endif
#ifdef CONFIG_X86_MCE_THRESHOLD
	n += s->irq_threshold_count;
#endif
#ifdef CONFIG_X86_MCE_AMD
	n += s->irq_deferred_error_count;
#endif
#ifdef CONFIG_X86_HV_CALLBACK_VECTOR
	n += s->irq_hv_callback_count;
#endif
	return n;
}

/*
 * Arm MONITOR on the word's line.  The one place that chooses the address:
 * both MWAIT paths use it, so the exit statistics test the real arming.
 * With statistics (a debug mode, run under emulators) the line's TLB entry
 * is dropped first: Bochs 2.7 arms MONITOR at the physical address of its
 * last TLB miss when the linear address hits its TLB.  Harmless elsewhere.
 */
static void hws_arm(const struct hws_waiter *w)
{
	const void *line = w->word;

	if (unlikely(test_misarm))	/* the neighbour in the same page */
		line = (const void *)((unsigned long)w->word ^ line_size);
	if (w->st)
		asm volatile("invlpg (%0)" : : "r" (line) : "memory");
	if (static_cpu_has_bug(X86_BUG_CLFLUSH_MONITOR)) {
		mb();
		clflush((void *)line);
		mb();
	}
	__monitor(line, 0, 0);
}

/*
 * MWAIT with interrupts masked but as break events (ECX[0]): called with
 * interrupts off, MONITOR armed and `before` read; returns with interrupts
 * off.  What ended it is told by whether the window let an interrupt in.
 */
static void hws_mwait_classified(struct hws_waiter *w, unsigned long before)
{
	struct hws_mwait_stats *st = w->st;
	bool irq;

	__mwait(mwait_hint, MWAIT_ECX_INTERRUPT_BREAK);
	/* STI's shadow covers the NOP; a pending interrupt is taken before CLI. */
	asm volatile("sti; nop; cli" ::: "memory");
	irq = hws_irq_count() != before;
	if (irq) {
		if (st->mwaits < 64)
			st->irq_mask |= 1ull << st->mwaits;
		st->irq_exits++;
	} else {
		st->quiet_exits++;
	}
	st->mwaits++;
	st->last_exit = irq ? HWS_MWAIT_EXIT_IRQ : HWS_MWAIT_EXIT_QUIET;
}

/* One HLT, publishing this CPU for KICK. */
static void hws_halt_once(struct hws_waiter *w)
{
	raw_local_irq_disable();
	atomic_set(w->halt_slot, 1 + smp_processor_id());
	/* Pairs with smp_mb() in KICK: it sees this CPU or we see the store. */
	smp_mb();
	if (!hws_must_stop(w))
		raw_safe_halt();	/* STI; HLT */
	else
		raw_local_irq_enable();
	atomic_set(w->halt_slot, HALT_CLAIMED);
}

/* One MONITOR/MWAIT (or HLT) with interrupts as break events. */
static void hws_sleep_once(struct hws_waiter *w)
{
	unsigned long before;

	if (w->halt_slot) {
		hws_halt_once(w);
		return;
	}
	if (!w->st) {
		raw_local_irq_disable();
		hws_arm(w);
		if (!hws_must_stop(w))
			__sti_mwait(mwait_hint, 0);
		else
			raw_local_irq_enable();
		return;
	}
	/* The counts are this CPU's: stay on it until they are compared. */
	preempt_disable();
	w->st->last_exit = HWS_MWAIT_EXIT_NONE;
	raw_local_irq_disable();
	before = hws_irq_count();
	hws_arm(w);
	if (!hws_must_stop(w))
		hws_mwait_classified(w, before);
	raw_local_irq_enable();
	preempt_enable();
}

/* 0 when the word changed, -ETIMEDOUT, or -ERESTARTSYS on a signal. */
static long hws_wait_loop(struct hws_waiter *w)
{
	long ret;

	hws_timer_init(w);
	for (;;) {
		if (READ_ONCE(*w->word) != w->expected) {
			ret = 0;
			break;
		}
		if (signal_pending(current)) {
			ret = -ERESTARTSYS;
			break;
		}
		if (ktime_get_ns() >= w->deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		cond_resched();		/* the CPU goes back whenever the scheduler asks */
		if (w->deadline != U64_MAX)
			hws_timer_follow(w);
		hws_sleep_once(w);
	}
	hrtimer_cancel(&w->timer);
	destroy_hrtimer_on_stack(&w->timer);
	/* Order later user-visible loads after the load that saw the change. */
	smp_rmb();
	return ret;
}

/* Check a wait's arguments and turn its relative timeout into a deadline. */
static int hws_check_wait(const struct hws_mwait_wait *a, u64 *deadline)
{
	if (a->flags || a->reserved)
		return -EINVAL;
	if (a->timeout_ns == HWS_MWAIT_FOREVER ||
	    check_add_overflow(ktime_get_ns(), a->timeout_ns, deadline))
		*deadline = U64_MAX;
	return 0;
}

/* After a signal, tell user space the time left so a restart continues it. */
static bool hws_set_left(struct hws_mwait_wait *a, u64 deadline, long ret)
{
	u64 now;

	if (ret != -ERESTARTSYS || deadline == U64_MAX)
		return false;
	now = ktime_get_ns();
	a->timeout_ns = now < deadline ? deadline - now : 0;
	return true;
}

/* The line array of f, or NULL before mmap; *nlines set accordingly. */
static u32 *hws_lines(struct hws_file *f, u32 *nlines)
{
	/* Pairs with smp_store_release() in hws_region_create(). */
	u32 *region = smp_load_acquire(&f->region);

	*nlines = region ? f->nlines : 0;
	return region;
}

/* WAIT (or HALT) on line a->index; w->st set by the caller or NULL. */
static long hws_wait_line(struct hws_file *f, struct hws_mwait_wait *a,
			  struct hws_waiter *w, bool halt)
{
	u32 nlines;
	u32 *lines = hws_lines(f, &nlines);
	long ret;

	ret = hws_check_wait(a, &w->deadline);
	if (ret)
		return ret;
	if (a->index >= nlines)
		return -EINVAL;
	w->word = lines + (size_t)a->index * (line_size / sizeof(u32));
	w->expected = a->expected;
	if (halt) {
		w->halt_slot = &f->halt_slot[a->index];
		if (atomic_cmpxchg(w->halt_slot, HALT_FREE, HALT_CLAIMED) != HALT_FREE)
			return -EBUSY;
	}
	ret = hws_wait_loop(w);
	if (halt)
		atomic_set(w->halt_slot, HALT_FREE);
	return ret;
}

/* WAIT_ADDR on the user word at a->addr. */
static long hws_wait_addr(struct hws_mwait_wait *a, struct hws_waiter *w)
{
	struct page *page;
	unsigned long uaddr;
	void *kaddr;
	long ret;

	ret = hws_check_wait(a, &w->deadline);
	if (ret)
		return ret;
	uaddr = a->addr;
	if (uaddr != a->addr || !IS_ALIGNED(uaddr, sizeof(u32)))
		return -EINVAL;
	if (!access_ok((void __user *)uaddr, sizeof(u32)))
		return -EFAULT;
	/*
	 * FOLL_WRITE breaks copy-on-write now, so the pinned page is the one
	 * the process's later stores reach; the pin keeps it from moving.
	 */
	ret = pin_user_pages_fast(uaddr & PAGE_MASK, 1, FOLL_WRITE, &page);
	if (ret != 1)
		return ret < 0 ? ret : -EFAULT;
	kaddr = kmap_local_page(page);
	w->word = kaddr + offset_in_page(uaddr);
	w->expected = a->expected;
	ret = hws_wait_loop(w);
	kunmap_local(kaddr);
	unpin_user_page(page);
	return ret;
}

/* WAIT, WAIT_ADDR and HALT: copy in, wait, report the time left after a signal. */
static long hws_ioc_wait(struct hws_file *f, void __user *uarg, unsigned int cmd)
{
	struct hws_mwait_wait a;
	struct hws_waiter w = { };
	long ret;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (cmd == HWS_MWAIT_IOC_WAIT_ADDR)
		ret = hws_wait_addr(&a, &w);
	else
		ret = hws_wait_line(f, &a, &w, cmd == HWS_MWAIT_IOC_HALT);
	if (hws_set_left(&a, w.deadline, ret) && copy_to_user(uarg, &a, sizeof(a)))
		return -EFAULT;
	return ret;
}

/* WAIT_STATS: as WAIT or WAIT_ADDR, then the exit statistics go back too. */
static long hws_ioc_wait_stats(struct hws_file *f, void __user *uarg)
{
	struct hws_mwait_stats st;
	struct hws_waiter w = { .st = &st };
	long ret;

	if (!exit_stats_ok)
		return -EOPNOTSUPP;
	if (copy_from_user(&st, uarg, sizeof(st)))
		return -EFAULT;
	if (st.by_addr > 1 || st.reserved)
		return -EINVAL;
	st.mwaits = st.quiet_exits = st.irq_exits = 0;
	st.irq_mask = 0;
	st.last_exit = HWS_MWAIT_EXIT_NONE;
	if (st.by_addr)
		ret = hws_wait_addr(&st.wait, &w);
	else
		ret = hws_wait_line(f, &st.wait, &w, false);
	hws_set_left(&st.wait, w.deadline, ret);
	if (copy_to_user(uarg, &st, sizeof(st)))
		return -EFAULT;
	return ret;
}

static void hws_kick_fn(void *unused)
{
	/* Nothing: the IPI has already ended the HLT on that CPU. */
}

static long hws_ioc_kick(struct hws_file *f, const u32 __user *uarg)
{
	u32 index, nlines;
	int v;

	if (get_user(index, uarg))
		return -EFAULT;
	hws_lines(f, &nlines);
	if (index >= nlines)
		return -EINVAL;
	/* Pairs with smp_mb() in hws_sleep_once(): order the caller's store first. */
	smp_mb();
	v = atomic_read(&f->halt_slot[index]);
	if (v <= 0 || v > nr_cpu_ids || !cpu_online(v - 1))
		return 0;
	smp_call_function_single(v - 1, hws_kick_fn, NULL, 0);
	return 1;
}

static long hws_ioc_info(void __user *uarg)
{
	struct hws_mwait_info info = {
		.abi_version = HWS_MWAIT_ABI_VERSION,
		.line_size = line_size,
		.max_lines = max_lines,
		.monitor_min = monitor_min,
		.monitor_max = monitor_max,
		.mwait_hint = mwait_hint,
		.features = (allow_halt ? HWS_MWAIT_F_HALT : 0) |
			    (exit_stats_ok ? HWS_MWAIT_F_EXIT_STATS : 0) |
			    (test_misarm ? HWS_MWAIT_F_MISARM : 0),
	};

	return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
}

static long hws_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct hws_file *f = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case HWS_MWAIT_IOC_INFO:
		return hws_ioc_info(uarg);
	case HWS_MWAIT_IOC_WAIT:
	case HWS_MWAIT_IOC_WAIT_ADDR:
		return hws_ioc_wait(f, uarg, cmd);
	case HWS_MWAIT_IOC_HALT:
		return allow_halt ? hws_ioc_wait(f, uarg, cmd) : -EOPNOTSUPP;
	case HWS_MWAIT_IOC_WAIT_STATS:
		return hws_ioc_wait_stats(f, uarg);
	case HWS_MWAIT_IOC_KICK:
		return allow_halt ? hws_ioc_kick(f, uarg) : -EOPNOTSUPP;
	default:
		return -ENOTTY;
	}
}

static int hws_region_create(struct hws_file *f, unsigned long len)
{
	unsigned long npages = len >> PAGE_SHIFT;
	unsigned long limit = (unsigned long)max_total_mib << (20 - PAGE_SHIFT);
	u32 nlines = len / line_size;
	void *region;

	if (nlines > max_lines)
		return -EINVAL;
	if (atomic_long_add_return(npages, &total_pages) > limit) {
		atomic_long_sub(npages, &total_pages);
		return -ENOMEM;
	}
	f->halt_slot = kvcalloc(nlines, sizeof(*f->halt_slot), GFP_KERNEL);
	region = vmalloc_user(len);	/* zeroed, VM_USERMAP */
	if (!region || !f->halt_slot) {
		vfree(region);
		kvfree(f->halt_slot);
		f->halt_slot = NULL;
		atomic_long_sub(npages, &total_pages);
		return -ENOMEM;
	}
	f->npages = npages;
	f->nlines = nlines;
	/* Pairs with smp_load_acquire() in hws_lines(). */
	smp_store_release(&f->region, region);
	return 0;
}

/*
 * The first mmap of an open file creates its region with the size asked for;
 * later ones map it again (offset 0, no larger).  Shared, not executable.
 */
static int hws_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct hws_file *f = file->private_data;
	unsigned long len = vma->vm_end - vma->vm_start;
	int ret = 0;

	if (!(vma->vm_flags & VM_SHARED) || vma->vm_pgoff)
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	mutex_lock(&f->lock);
	if (!f->region)
		ret = hws_region_create(f, len);
	else if (len > f->npages << PAGE_SHIFT)
		ret = -EINVAL;
	if (!ret) {
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
		vm_flags_clear(vma, VM_MAYEXEC);
#else
		vma->vm_flags &= ~VM_MAYEXEC;
#endif
		ret = remap_vmalloc_range(vma, f->region, 0);
	}
	mutex_unlock(&f->lock);
	return ret;
}

static int hws_open(struct inode *inode, struct file *file)
{
	struct hws_file *f = kzalloc(sizeof(*f), GFP_KERNEL);

	if (!f)
		return -ENOMEM;
	mutex_init(&f->lock);
	file->private_data = f;
	return 0;
}

/* Last reference: no ioctl runs and no mapping is left. */
static int hws_release(struct inode *inode, struct file *file)
{
	struct hws_file *f = file->private_data;

	if (f->region) {
		vfree(f->region);
		kvfree(f->halt_slot);
		atomic_long_sub(f->npages, &total_pages);
	}
	mutex_destroy(&f->lock);
	kfree(f);
	return 0;
}

static const struct file_operations hws_fops = {
	.owner = THIS_MODULE,
	.open = hws_open,
	.release = hws_release,
	.mmap = hws_mmap,
	.unlocked_ioctl = hws_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice hws_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "hwsync-mwait",
	.fops = &hws_fops,
	.mode = 0600,		/* root only; see README.md for a udev rule */
};

/* Is an MWAIT hint's C-state and sub-state enumerated by CPUID.05H:EDX? */
static bool hws_hint_ok(unsigned int hint, unsigned int edx)
{
	unsigned int cstate = MWAIT_HINT2CSTATE(hint) + 1;	/* 0 means C1 */

	if (hint == 0)
		return true;	/* C1 is always there */
	if (hint > 0xff || cstate > 7)
		return false;
	return MWAIT_HINT2SUBSTATE(hint) < ((edx >> (cstate * MWAIT_SUBSTATE_SIZE)) &
					    MWAIT_SUBSTATE_MASK);
}

/*
 * Does MWAIT with ECX[0]=1 work, whatever CPUID says?  QEMU's software
 * emulation advertises it but raises #GP: the exception-table entry skips
 * the faulting MWAIT instead of oopsing.  The store after MONITOR ends the
 * MWAIT at once where the monitor works; a pending interrupt otherwise.
 */
static bool __init hws_mwait_ecx1_works(void)
{
	static u32 probe_word;
	int ok = 0;

	raw_local_irq_disable();
	__monitor(&probe_word, 0, 0);
	WRITE_ONCE(probe_word, 1);
	asm volatile("1: .byte 0x0f, 0x01, 0xc9\n\t"	/* mwait %eax, %ecx */
		     "movl $1, %0\n"
		     "2:\n"
		     _ASM_EXTABLE(1b, 2b)
		     : "+r" (ok)
		     : "a" (0), "c" (MWAIT_ECX_INTERRUPT_BREAK)
		     : "memory");
	raw_local_irq_enable();
	return ok;
}

static int __init hws_init(void)
{
	unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
	int ret;

	if (!boot_cpu_has(X86_FEATURE_MWAIT)) {
		pr_err("not loading: this CPU has no MONITOR/MWAIT (CPUID.01H:ECX.MONITOR[bit 3] is 0, or the hypervisor or kernel hides it)\n");
		return -ENODEV;
	}
	if (boot_cpu_data.cpuid_level >= CPUID_MWAIT_LEAF)
		cpuid(CPUID_MWAIT_LEAF, &eax, &ebx, &ecx, &edx);
	monitor_min = eax & 0xffff;
	monitor_max = ebx & 0xffff;
	if (!hws_hint_ok(mwait_hint, edx)) {
		pr_err("not loading: mwait_hint=%#x names a C-state CPUID.05H:EDX (%#x) does not enumerate\n",
		       mwait_hint, edx);
		return -EINVAL;
	}
	/* Pad each line to the largest monitor line so stores elsewhere never wake it. */
	line_size = max3(monitor_max, (unsigned int)boot_cpu_data.x86_clflush_size, 64U);
	line_size = roundup_pow_of_two(line_size);
	if (line_size > PAGE_SIZE) {
		pr_err("not loading: monitor line of %u bytes is larger than a page\n", line_size);
		return -EINVAL;
	}
	/*
	 * Classifying exits needs MWAIT to take masked interrupts as break
	 * events (CPUID.05H:ECX[0] extensions, [1] interrupt break).
	 */
	if (exit_stats) {
		if ((ecx & (CPUID5_ECX_EXTENSIONS_SUPPORTED | CPUID5_ECX_INTERRUPT_BREAK)) !=
		    (CPUID5_ECX_EXTENSIONS_SUPPORTED | CPUID5_ECX_INTERRUPT_BREAK))
			pr_warn("exit_stats=1 ignored: MWAIT cannot take masked interrupts as break events here (CPUID.05H:ECX %#x)\n",
				ecx);
		else if (!hws_mwait_ecx1_works())
			pr_warn("exit_stats=1 ignored: MWAIT with ECX[0]=1 faults although CPUID.05H:ECX (%#x) offers it (QEMU's software emulation does this)\n",
				ecx);
		else
			exit_stats_ok = true;
	}
	if (test_misarm)
		pr_warn("test_misarm=1: MONITOR arms the wrong line, stores will not wake waiters (testing only)\n");
	if (!max_lines || max_lines > (1U << 24)) {
		pr_err("not loading: max_lines=%u is not in 1..16777216\n", max_lines);
		return -EINVAL;
	}
	ret = misc_register(&hws_dev);
	if (ret) {
		pr_err("cannot register /dev/%s: %d\n", hws_dev.name, ret);
		return ret;
	}
	pr_info("/dev/%s ready: monitor line %u..%u bytes, stride %u, hint %#x%s%s\n",
		hws_dev.name, monitor_min, monitor_max, line_size, mwait_hint,
		allow_halt ? ", halt+ipi on" : "", exit_stats_ok ? ", exit stats on" : "");
	return 0;
}

static void __exit hws_exit(void)
{
	misc_deregister(&hws_dev);
}

module_init(hws_init);
module_exit(hws_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("hwsync");
MODULE_DESCRIPTION("MONITOR/MWAIT condition wait for user space (hwsync kmwait policy)");
