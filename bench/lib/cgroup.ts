/**
 * A CPU limit as Kubernetes sets one: a CFS quota (cgroup v1 `cpu` controller, root needed),
 * `cpus` of a CPU per 100 ms period. The tier bench holds each lookup node to a quarter of a
 * CPU this way, so capacity is measured per node as a k8s CPU limit gives it.
 */
import fs from "node:fs";
import path from "node:path";

const CPU_CONTROLLER = "/sys/fs/cgroup/cpu";
const PERIOD_US = 100_000;

export interface CpuLimit {
	/** Moves a process (every thread of it) under the limit. */
	add(pid: number): void;
	remove(): void;
}

/** Why a CPU limit cannot be set here, or null. */
export function cpuLimitMissing(): string | null {
	try {
		fs.accessSync(path.join(CPU_CONTROLLER, "cgroup.procs"), fs.constants.W_OK);
		return null;
	} catch {
		return `the tier bench needs the cgroup v1 cpu controller writable at ${CPU_CONTROLLER} (root)`;
	}
}

export function cpuLimit(name: string, cpus: number): CpuLimit {
	const dir = path.join(CPU_CONTROLLER, `registry-bench-${process.pid}-${name}`);
	fs.mkdirSync(dir, { recursive: true });
	fs.writeFileSync(path.join(dir, "cpu.cfs_period_us"), String(PERIOD_US));
	fs.writeFileSync(path.join(dir, "cpu.cfs_quota_us"), String(Math.round(cpus * PERIOD_US)));
	return {
		add: (pid) => fs.writeFileSync(path.join(dir, "cgroup.procs"), String(pid)),
		remove: () => {
			// A cgroup is removed once empty: its processes go back to the root group first.
			for (const pid of fs.readFileSync(path.join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean))
				fs.writeFileSync(path.join(CPU_CONTROLLER, "cgroup.procs"), pid);
			fs.rmdirSync(dir);
		},
	};
}
