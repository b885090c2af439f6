"""The records the harness writes and reads: their kinds (`kinds`), the run record's checks and reader (`run_checks`,
`run_files`), and the typed readers of measurement records (`measurements`, in the terms of `schema`)."""

from harness.records.kinds import (
    DataBenchRecord,
    PlanProfileRecord,
    PrepareRecord,
    Record,
    RunRecord,
    ScalingRecord,
    SuiteProfileRecord,
    ThroughputRecord,
)
from harness.records.measurements import (
    KERNEL_GROUPS,
    RecordError,
    read_scaling_record,
    read_suite_profile,
    read_throughput_record,
)
from harness.records.run_files import incomplete_reason, read_complete_run_record, read_run_record

__all__ = [
    "KERNEL_GROUPS", "DataBenchRecord", "PlanProfileRecord", "PrepareRecord", "Record", "RecordError", "RunRecord",
    "ScalingRecord", "SuiteProfileRecord", "ThroughputRecord", "incomplete_reason", "read_complete_run_record",
    "read_run_record", "read_scaling_record", "read_suite_profile", "read_throughput_record",
]
