#!/usr/bin/env python3
"""Shows the lie of JournalFsyncFailureTest's fault (run as root): ext4 on a loop device whose backing image sits on a
small tmpfs. Appends, fdatasyncs after each write, fills the tmpfs, appends until an fdatasync fails, then remounts
and compares the file with what was written. On the kernels tried (6.x), the fdatasync whose write-back first reaches
a block the tmpfs cannot store returns 0 (the loop driver completes a write that stored only some of its pages as a
success); the next one fails with ENOSPC; after the remount that block reads as zeros although it was "durable"."""
import os, random, subprocess, tempfile


def sh(*a, check=True):
    r = subprocess.run(a, capture_output=True, text=True)
    if check and r.returncode:
        raise SystemExit(f"{a}: {r.stderr}")
    return r


d = tempfile.mkdtemp(prefix="short-write")
backing, mnt = d + "/backing", d + "/mnt"
os.makedirs(backing)
os.makedirs(mnt)
sh("mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", backing)
loop = None
try:
    img = backing + "/disk.img"
    with open(img, "wb") as f:
        f.truncate(256 << 20)
    loop = sh("losetup", "-f", "--show", img).stdout.strip()
    sh("mkfs.ext4", "-q", "-F", "-b", "4096", loop)
    sh("mount", loop, mnt)
    fd = os.open(mnt + "/segment", os.O_CREAT | os.O_WRONLY, 0o600)
    rnd, written, durable = random.Random(1), bytearray(), 0
    for _ in range(200):
        b = rnd.randbytes(3000)
        os.write(fd, b)
        written += b
        os.fdatasync(fd)
    durable = len(written)
    try:
        with open(backing + "/filler", "wb") as f:
            while True:
                f.write(b"\1" * (1 << 20))
    except OSError:
        pass
    for _ in range(40):
        b = rnd.randbytes(1000)
        os.write(fd, b)
        written += b
        try:
            os.fdatasync(fd)
            durable = len(written)
        except OSError as e:
            print(f"fdatasync failed at {len(written)} bytes: {e}")
            break
    os.close(fd)
    sh("umount", mnt, check=False)
    os.remove(backing + "/filler")
    sh("mount", loop, mnt)
    data = open(mnt + "/segment", "rb").read()
    bad = next((i for i in range(min(len(data), durable)) if data[i] != written[i]), None)
    if bad is None and len(data) >= durable:
        print(f"every one of the {durable} bytes fdatasync called durable is on the device")
    else:
        print(f"fdatasync called {durable} bytes durable; the device differs from byte {bad} (block {bad // 4096}), "
              f"file size {len(data)}")
    sh("umount", mnt)
finally:
    sh("umount", "-l", mnt, check=False)
    if loop:
        sh("losetup", "-d", loop, check=False)
    sh("umount", "-l", backing, check=False)
