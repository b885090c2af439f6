#!/bin/bash
# One GPU: SUITE at proxy scale within the call's time; the records of finished runs come back in suite.tgz.
source tools/device/_setup.sh "$1"
suite=$2; shift 2
mkdir -p /root/res; cp -r results/$suite /root/res/ 2>/dev/null  # recorded runs are not redone
timeout $(left 575) python3 -m harness reproduce --suite $suite --scale proxy --results /root/res --no-report "$@" \
  > /root/res/reproduce.log 2>&1
echo "reproduce exit $?"; el reproduce; grep -v "it/s\|video/s" /root/res/reproduce.log | tail -25
tar czf $OUT/suite.tgz -C /root res
