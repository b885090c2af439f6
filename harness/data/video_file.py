"""Opening a video file: what needs no decoder to find (missing, a folder, empty, refused by the file system), and
what FFmpeg's refusal means (a container its first bytes announce but cut off or damaged, or no video at all)."""

from __future__ import annotations

from pathlib import Path

import av
import av.container

from harness.data.errors import VideoError
from harness.io import unreadable_reason

OPEN_ERRORS = (av.error.FFmpegError, OSError, UnicodeDecodeError, ValueError)  # what av.open raises for a bad file


def open_container(path: Path) -> av.container.InputContainer:
    """`path` opened by FFmpeg (metadata it cannot read ignored), holding a video stream; VideoError otherwise."""
    check_file(path)
    try:
        container = av.open(str(path), metadata_errors="ignore")
    except OPEN_ERRORS as err:
        kind = container_signature(path)
        if kind:  # a video file's header but FFmpeg cannot parse it: cut off or damaged, not a non-video
            raise VideoError("undecodable", f"{path} starts like {kind} but FFmpeg cannot open it "
                                            f"(truncated or corrupt: {err})") from None
        raise VideoError("not_a_video", f"FFmpeg cannot open {path} as a video ({err})") from None
    if not container.streams.video:
        container.close()
        raise VideoError("no_video_stream", f"{path} has no video stream")
    return container


def container_signature(path: Path) -> str | None:
    """The container a file's first bytes announce (MP4/MOV, Matroska/WebM, AVI), or None."""
    with open(path, "rb") as f:
        head = f.read(12)
    if head[4:8] in (b"ftyp", b"moov", b"mdat", b"free", b"wide"):
        return "an MP4/MOV file"
    if head[:4] == b"\x1a\x45\xdf\xa3":
        return "a Matroska/WebM file"
    if head[:4] == b"RIFF" and head[8:12] == b"AVI ":
        return "an AVI file"
    return None


def unreadable(path: str | Path, err: OSError, what: str = "") -> VideoError:
    """The VideoError of a file the file system refuses to open (permissions, most often), named (after `what`)
    with the fix."""
    return VideoError("unreadable", f"{what}{path} {unreadable_reason(path, err)}")


def check_file(path: Path) -> None:
    """VideoError for what needs no decoder to find: a missing path, a folder, an empty file, a file that cannot
    be opened (FFmpeg would only say 'Permission denied', and the header sniffing after it would raise)."""
    try:
        size = path.stat().st_size
    except (FileNotFoundError, NotADirectoryError):
        raise VideoError("missing", f"no such file {path}") from None
    except OSError as err:  # a folder on the way that may not be searched
        raise unreadable(path, err) from None
    if not path.is_file():
        raise VideoError("not_a_video", f"{path} is a directory or special file, not a video file")
    if size == 0:
        raise VideoError("empty", f"{path} is empty (0 bytes)")
    try:
        with open(path, "rb"):
            pass
    except OSError as err:
        raise unreadable(path, err) from None
