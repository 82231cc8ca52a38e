"""InfiniBand units: human names in the spec, IBTA codes in rendered files."""

from __future__ import annotations

from enum import StrEnum


class Speed(StrEnum):
    SDR = "SDR"
    DDR = "DDR"
    QDR = "QDR"
    FDR10 = "FDR10"
    FDR = "FDR"
    EDR = "EDR"
    HDR = "HDR"
    NDR = "NDR"
    XDR = "XDR"


class Width(StrEnum):
    X1 = "1x"
    X2 = "2x"
    X4 = "4x"
    X8 = "8x"
    X12 = "12x"


# Per-lane data rate in Gb/s after line encoding (8b/10b up to QDR, 64b/66b after): the "line rate"
# acceptance bandwidth is measured against (4x HDR = 200 Gb/s, 4x QDR = 32 Gb/s).
LANE_DATA_GBPS: dict[Speed, float] = {
    Speed.SDR: 2.0,
    Speed.DDR: 4.0,
    Speed.QDR: 8.0,
    Speed.FDR10: 10.0,
    Speed.FDR: 13.64,
    Speed.EDR: 25.0,
    Speed.HDR: 50.0,
    Speed.NDR: 100.0,
    Speed.XDR: 200.0,
}

LANES: dict[Width, int] = {Width.X1: 1, Width.X2: 2, Width.X4: 4, Width.X8: 8, Width.X12: 12}


def data_rate_gbps(speed: Speed, width: Width) -> float:
    """Usable data rate of a link, e.g. HDR 4x -> 200.0."""
    return round(LANE_DATA_GBPS[speed] * LANES[width], 2)


# IBTA MTU enum (partitions.conf mtu=, qos-policy mtu-limit).
MTU_CODE: dict[int, int] = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}

# SA rate enum as OpenSM 3.3.23 knows it (stops at 22 = 600 Gb/s).
RATE_CODE: dict[float, int] = {
    2.5: 2,
    10: 3,
    30: 4,
    5: 5,
    20: 6,
    40: 7,
    60: 8,
    80: 9,
    120: 10,
    14: 11,
    56: 12,
    112: 13,
    168: 14,
    25: 15,
    100: 16,
    200: 17,
    300: 18,
    28: 19,
    50: 20,
    400: 21,
    600: 22,
}

IPOIB_MTU_MAX = {"datagram": 4092, "connected": 65520}
