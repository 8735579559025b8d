"""Read back what an offline W&B run wrote to its ``run-<id>.wandb`` file.

wandb 0.31 has no Python reader of that file any more (its Go core writes and syncs it), so
the tests read it here: the file is a log of blocks of 32 KiB after a 7-byte header
(``:W&B``, magic 0xBEE1, version 0); each chunk has a 7-byte header (CRC-32C, length, type:
1 whole, 2 first, 3 middle, 4 last) and the chunks of one record together are a
``wandb_internal_pb2.Record`` protobuf, parsed with wandb's own classes.
"""
import glob
import json
import os.path as osp
import struct

BLOCK = 32768
FILE_HEADER = struct.Struct("<4sHB")
CHUNK_HEADER = struct.Struct("<IHB")


def records(path):
    """Every ``Record`` in one ``.wandb`` file, in order."""
    from wandb.proto import wandb_internal_pb2 as pb
    with open(path, "rb") as f:
        data = f.read()
    ident, magic, version = FILE_HEADER.unpack_from(data, 0)
    assert (ident, magic, version) == (b":W&B", 0xBEE1, 0), path
    pos, pending, out = FILE_HEADER.size, b"", []
    while pos + CHUNK_HEADER.size <= len(data):
        left = BLOCK - pos % BLOCK
        if left < CHUNK_HEADER.size:   # the block's tail is padding
            pos += left
            continue
        _, length, kind = CHUNK_HEADER.unpack_from(data, pos)
        if kind == 0 and length == 0:
            break
        chunk = data[pos + CHUNK_HEADER.size:pos + CHUNK_HEADER.size + length]
        pos += CHUNK_HEADER.size + length
        pending = chunk if kind in (1, 2) else pending + chunk
        if kind in (1, 4):
            record = pb.Record()
            record.ParseFromString(pending)
            out.append(record)
            pending = b""
    return out


def run_files(output_dir):
    """The ``.wandb`` files of the offline runs under ``output_dir/wandb``, oldest first."""
    return sorted(glob.glob(osp.join(output_dir, "wandb", "offline-run-*", "run-*.wandb")))


def history(output_dir):
    """The rows logged (``run.log``) by every offline run in ``output_dir``, as dicts with
    ``_step``, oldest first."""
    rows = []
    for path in run_files(output_dir):
        for record in records(path):
            if record.WhichOneof("record_type") == "history":
                row = {}
                for item in record.history.item:
                    key = item.key or "/".join(item.nested_key)
                    row[key] = json.loads(item.value_json)
                if record.history.HasField("step"):
                    row["_step"] = record.history.step.num
                rows.append(row)
    return rows


def config(output_dir):
    """The run's configuration, as the last offline run in ``output_dir`` recorded it."""
    out = {}
    for path in run_files(output_dir):
        for record in records(path):
            if record.WhichOneof("record_type") == "config":
                for item in record.config.update:
                    key = item.key or "/".join(item.nested_key)
                    out[key] = json.loads(item.value_json)
    return out


def run_record(output_dir):
    """The ``RunRecord`` (id, project, group, name) of the first offline run."""
    for record in records(run_files(output_dir)[0]):
        if record.WhichOneof("record_type") == "run":
            return record.run
    return None
