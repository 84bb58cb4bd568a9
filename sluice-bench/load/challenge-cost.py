#!/usr/bin/env python3
"""What a challenge costs a script: the CPU time to solve Sluice's proof of work at each
difficulty, as a plain Python script does it (hashlib, one core), the way an attacker without a
GPU would. Each solve finds n such that SHA-256("<puzzle>.<n>") starts with `bits` zero bits.

  python3 sluice-bench/load/challenge-cost.py [solves per difficulty] [difficulties...]

Prints, per difficulty, the median and mean CPU seconds per solve (time.process_time) and the
hashes tried; docs/SECURITY.md divides them by a clearance's budget.
"""
import hashlib
import os
import statistics
import sys
import time


def solve(puzzle: bytes, bits: int) -> int:
    target = 1 << (256 - bits)
    n = 0
    prefix = puzzle + b"."
    while True:
        if int.from_bytes(hashlib.sha256(prefix + str(n).encode()).digest(), "big") < target:
            return n + 1
        n += 1


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    levels = [int(x) for x in sys.argv[2:]] or [16, 17, 18, 20]
    print("bits  solves  median_cpu_s  mean_cpu_s  mean_hashes")
    for bits in levels:
        cpu, hashes = [], []
        for _ in range(runs):
            puzzle = os.urandom(24).hex().encode()
            t0 = time.process_time()
            hashes.append(solve(puzzle, bits))
            cpu.append(time.process_time() - t0)
        print(f"{bits:4d}  {runs:6d}  {statistics.median(cpu):12.4f}  {statistics.mean(cpu):10.4f}"
              f"  {statistics.mean(hashes):11.0f}")


if __name__ == "__main__":
    main()
