"""mstlink (mstflint) and mlxlink (NVIDIA MFT) on the captures in tests/fixtures/mstlink (each with its source and
version on its first line, tests/fixtures/mstlink/README.md lists the values each prints): every typed field read
value for value, and selected raw section values; then the layouts no capture shows but the tools write: colour
codes with the reset at the start of the next line, ``--json`` with status code 1, a warning before the output,
a link that is down (``N/A``), placeholder DDM ranges, a single-mode module's reach, each Cable Type's medium,
and output with no section at all."""

from __future__ import annotations

import json
import re

import pytest
from captures import capture_names, read_capture

from ibprov.probes._text import ParseError
from ibprov.probes.mstlink import ModuleInfo, MstlinkReading, cable_medium, parse_ber, parse_mstlink

NO_ERRORS = 1.5e-254  # 15E-255: mlxlink's "no errors" BER

NDR_DAC = "mstlink/ndr-cx7-hca-module-dac-col35-mft435-csegpu.txt"
BF3_DAC = "mstlink/100gbe-bf3-dpu-module-counters-col35-mft430-sigcomm26.txt"
CX4_COUNTERS = "mstlink/100gbe-cx4-hca-counters-edr-class-collapsed-forum206063.txt"
CX4_EYE = "mstlink/100gbe-cx4-hca-eye-collapsed-forum206063.txt"
CX6_KONTRONN = "mstlink/200gbe-cx6-eth-operational-supported-collapsed-kontronn.txt"
CX8_JSON = "mstlink/400g-cx8-eth-osfp-module-json-trimmed-optics-test.txt"
SICHEK_DDM = "mstlink/400g-osfp-module-ddm-selected-lines-sichek.txt"
SICHEK_ANSI = "mstlink/400g-unknown-counters-ansi-transcribed-sichek.txt"
HDR_GREP = "mstlink/hdr-cx6-hca-counters-grepfiltered-col32-mft424-shadeform.txt"
HDR_DEFAULT = "mstlink/hdr-cx6-hca-default-col32-mft424-shadeform.txt"
NDR_SWITCH_BUILT = "mstlink/ndr-quantum2-switch-inband-lid-optical-errors-BUILT.txt"


def read(name: str) -> MstlinkReading:
    """The reading of a capture (its ``# source:`` line skipped)."""
    return parse_mstlink(read_capture(name))


def test_every_mstlink_capture_is_tested_here() -> None:
    assert capture_names("mstlink/*.txt") == sorted(
        [
            NDR_DAC,
            BF3_DAC,
            CX4_COUNTERS,
            CX4_EYE,
            CX6_KONTRONN,
            CX8_JSON,
            SICHEK_DDM,
            SICHEK_ANSI,
            HDR_GREP,
            HDR_DEFAULT,
            NDR_SWITCH_BUILT,
        ]
    )


def test_mft_4_35_ndr_dac_module_is_read_value_for_value() -> None:
    """MFT 4.35.0-159 ``mlxlink --show_mo`` on a ConnectX-7 (IB NDR 4x, FS OSFP passive DAC), from the public
    Markdown "How to connect two GPU servers using Infiniband DAC cables": colon at 35, a trailing space after
    every value of the first four sections, ``MFT Version`` without the ``mft`` prefix, DDM ``0 [0..0]``."""
    reading = read(NDR_DAC)
    assert reading == MstlinkReading(
        sections=reading.sections,
        state="Active",
        physical_state="LinkUp",
        speed="IB-NDR",
        width="4x",
        status_opcode=0,
        recommendation="No issue was observed",
        firmware="28.46.3048",
        minutes_since_clear=None,
        effective_ber=None,
        raw_ber=None,
        symbol_ber=None,
        effective_errors=None,
        symbol_errors=None,
        raw_errors_per_lane=(),
        link_down=None,
        link_recoveries=None,
        module=ModuleInfo(
            medium="dac",
            cable_type="Passive copper cable",
            technology="Copper cable, passive, unequalized",
            identifier="OSFP",
            vendor="FS",
            part_number="OSFPFL-400G-PC01",
            serial="C2604279049-2",
            length_m=1.0,
            temperature_c=0.0,  # printed "0 [0..0]": the value as printed, the placeholder range no threshold
            temperature_high_c=None,
            firmware=None,  # FW Version N/A
        ),
        notes=(),
        status_code=0,
    )
    assert list(reading.sections) == [
        "Operational Info",
        "Supported Info",
        "Troubleshooting Info",
        "Tool Information",
        "Module Info",
    ]
    assert reading.sections["Operational Info"]["FEC"] == "Ethernet_Consortium_LL_50G_RS_FEC_PLR -(272,257+1)"
    assert reading.sections["Supported Info"] == {
        "Enabled Link Speed": "0x000000f1 (NDR,HDR,EDR,FDR,SDR)",
        "Supported Cable Speed": "0x000000f1 (NDR,HDR,EDR,FDR,SDR)",
    }
    assert reading.sections["Tool Information"] == {
        "Firmware Version": "28.46.3048",
        "amBER Version": "6.4",
        "MFT Version": "4.35.0-159",
    }
    module = reading.sections["Module Info"]
    assert module["Temperature [C]"] == "0 [0..0]"
    assert module["Compliance"] == "IB NDR"
    assert module["OUI"] == "Nvidia"
    assert module["SMF Length"] == "N/A"
    assert module["Rx LOS [per lane]"] == "1,0,1,1"
    assert module["Attenuation (5g,7g,12g,25g)[dB]"] == "0,0,0,0"
    assert reading.field("Module", "Cable Breakout") == "OSFP to OSFP"


def test_mft_4_30_bluefield3_ethernet_dac_with_counters_is_read_value_for_value() -> None:
    """MFT 4.30.1-8 ``mlxlink -p 1 -m -c`` on a BlueField-3 (Ethernet 100G, FS QSFP28 3 m passive DAC), from
    fchamicapereira/sigcomm26-tutorial-bluefield README.md: colon at 35 already in 4.30, ``(Ext.)`` supported
    keys, no DDM (Temperature N/A), Ethernet amBER counters (no Symbol lines, Raw BER printed last)."""
    reading = read(BF3_DAC)
    assert reading == MstlinkReading(
        sections=reading.sections,
        state="Active",
        physical_state="LinkUp",
        speed="100G",
        width="4x",
        status_opcode=0,
        recommendation="No issue was observed",
        firmware="32.43.2402",
        minutes_since_clear=25074.8,
        effective_ber=NO_ERRORS,
        raw_ber=NO_ERRORS,
        symbol_ber=None,
        effective_errors=0,
        symbol_errors=None,
        raw_errors_per_lane=(0, 0, 0, 0),
        link_down=0,
        link_recoveries=0,
        module=ModuleInfo(
            medium="dac",
            cable_type="Passive copper cable",
            technology="Copper cable, passive, unequalized",
            identifier="QSFP28",
            vendor="FS",
            part_number="Q28-PC03",
            serial="S2202655321-1",
            length_m=3.0,
            temperature_c=None,
            temperature_high_c=None,
            firmware=None,
        ),
        notes=(),
        status_code=0,
    )
    assert reading.sections["Operational Info"]["FEC"] == "Standard RS-FEC - RS(528,514)"
    assert reading.sections["Supported Info"] == {
        "Enabled Link Speed (Ext.)": "0x00000200 (100G_4X)",
        "Supported Cable Speed (Ext.)": "0x000002f2 (100G_4X,50G_2X,40G,25G,10G,1G)",
    }
    assert reading.sections["Tool Information"]["amBER Version"] == "3.6"
    assert reading.sections["Tool Information"]["MFT Version"] == "mft 4.30.1-8"
    module = reading.sections["Module Info"]
    assert module["Temperature [C]"] == "N/A"
    assert module["Digital Diagnostic Monitoring"] == "No"
    assert module["OUI"] == "Other"
    assert module["Attenuation (5g,7g,12g)[dB]"] == "0,0,0"
    assert module["Cable Breakout"].startswith("Channels implemented [1,2,3,4]/Cable with single far-end")
    assert list(reading.sections["Physical Counters and BER Info"])[-1] == "Raw Physical BER"


def test_old_mft_cx4_edr_class_counters_collapsed_by_a_forum_page_are_read_value_for_value() -> None:
    """``mlxlink -c`` of an older MFT (version not posted) on a ConnectX-4 (Ethernet 100GbE), from the NVIDIA
    developer forum thread 206063: padding collapsed to ``Key : value`` and a blank line between all lines, no
    Tool Information, EDR-class counters with Raw BER before Raw Errors Per Lane, no link counters."""
    reading = read(CX4_COUNTERS)
    assert reading == MstlinkReading(
        sections=reading.sections,
        state="Active",
        physical_state="LinkUp",
        speed="100GbE",
        width="4x",
        status_opcode=0,
        recommendation="No issue was observed.",
        firmware=None,
        minutes_since_clear=1715.4,
        effective_ber=NO_ERRORS,
        raw_ber=3e-12,
        symbol_ber=None,
        effective_errors=0,
        symbol_errors=None,
        raw_errors_per_lane=(26711, 0, 0, 9108),
        link_down=None,
        link_recoveries=None,
        module=None,
        notes=(),
        status_code=0,
    )
    assert list(reading.sections) == [
        "Operational Info",
        "Supported Info",
        "Troubleshooting Info",
        "Physical Counters and BER Info",
    ]
    assert reading.sections["Operational Info"]["FEC"] == "Standard RS-FEC - RS(528,514)"
    assert reading.sections["Supported Info"] == {
        "Enabled Link Speed": "0xf8f1f0d3 (100G,50G,40G,25G,10G,1G)",
        "Supported Cable Speed": "0xf8f1f0d3 (100G,50G,40G,25G,10G,1G)",
    }
    assert list(reading.sections["Physical Counters and BER Info"]) == [
        "Time Since Last Clear [Min]",
        "Effective Physical Errors",
        "Effective Physical BER",
        "Raw Physical BER",
        "Raw Physical Errors Per Lane",
    ]


def test_old_mft_cx4_eye_opening_collapsed_by_a_forum_page_keeps_the_eye_values() -> None:
    """``mlxlink -e`` of an older MFT (version not posted) on a ConnectX-4 (Ethernet 100GbE), from the NVIDIA
    developer forum thread 206063: the EYE Opening Info section kept as printed (``", "``-separated lanes, one
    space in "Phase Eye Opening" as the page shows it); no counters, so every counter field is None."""
    reading = read(CX4_EYE)
    assert reading == MstlinkReading(
        sections=reading.sections,
        state="Active",
        physical_state="LinkUp",
        speed="100GbE",
        width="4x",
        status_opcode=0,
        recommendation="No issue was observed.",
        firmware=None,
        minutes_since_clear=None,
        effective_ber=None,
        raw_ber=None,
        symbol_ber=None,
        effective_errors=None,
        symbol_errors=None,
        raw_errors_per_lane=(),
        link_down=None,
        link_recoveries=None,
        module=None,
        notes=(),
        status_code=0,
    )
    assert reading.sections["EYE Opening Info"] == {
        "Physical Grade": "3065, 3367, 4371, 2932",
        "Height Eye Opening [mV]": "48, 53, 57, 37",
        "Phase Eye Opening [psec]": "12, 14, 15, 10",
    }
    assert reading.sections["Troubleshooting Info"] == {
        "Status Opcode": "0",
        "Group Opcode": "N/A",
        "Recommendation": "No issue was observed.",
    }


def test_cx6_sections_titled_with_page_anchors_and_no_underline_are_read_value_for_value() -> None:
    """``mlxlink -m -c`` (MFT version not given) on a ConnectX-6 (Ethernet 200G), Operational and Supported
    blocks only, from the kontronn.com article: titles carry `` #`` and no underline, padding collapsed, no space
    between the speed mask and ``(``."""
    reading = read(CX6_KONTRONN)
    assert reading == MstlinkReading(
        sections=reading.sections,
        state="Active",
        physical_state="ETH_AN_FSM_ENABLE",
        speed="200G",
        width="4x",
        status_opcode=None,
        recommendation=None,
        firmware=None,
        minutes_since_clear=None,
        effective_ber=None,
        raw_ber=None,
        symbol_ber=None,
        effective_errors=None,
        symbol_errors=None,
        raw_errors_per_lane=(),
        link_down=None,
        link_recoveries=None,
        module=None,
        notes=(),
        status_code=0,
    )
    assert list(reading.sections) == ["Operational Info", "Supported Info"]
    assert reading.sections["Operational Info"]["FEC"] == "Standard RS-FEC (544,514)"
    assert reading.sections["Operational Info"]["Auto Negotiation"] == "ON"
    assert reading.sections["Supported Info"] == {
        "Enabled Link Speed (Ext.)": "0x000017f2(200G,100G_2X,100G_4X,50G_1X,50G_2X,40G,25G,10G,1G)",
        "Supported Cable Speed (Ext.)": "0x000017d0(200G,100G_2X,100G_4X,50G_1X,50G_2X,25G,10G)",
    }


def test_cx8_json_module_info_reads_the_smf_reach_and_trims_the_padded_vendor_strings() -> None:
    """``mlxlink -m --json`` (MFT version not given) on a ConnectX-8 with an ACCELINK OSFP 400GBASE-DR4 optic,
    from an unattributed public TypeScript test (trimmed to 15 Module Info keys by its author): jsoncpp layout,
    status ``{"code": 0, "message": "success"}``, reach in ``SMF Length`` (no Transfer Distance key), the part
    number and serial padded with spaces, CDR RX as a ``values`` array."""
    reading = read(CX8_JSON)
    assert reading == MstlinkReading(
        sections=reading.sections,
        state=None,
        physical_state=None,
        speed=None,
        width=None,
        status_opcode=None,
        recommendation=None,
        firmware=None,
        minutes_since_clear=None,
        effective_ber=None,
        raw_ber=None,
        symbol_ber=None,
        effective_errors=None,
        symbol_errors=None,
        raw_errors_per_lane=(),
        link_down=None,
        link_recoveries=None,
        module=ModuleInfo(
            medium="transceiver",
            cable_type="Optical Module (separated)",
            technology=None,
            identifier="OSFP",
            vendor="ACCELINK",
            part_number="RTXM600-2401",
            serial="MODSN0001",
            length_m=500.0,
            temperature_c=48.0,
            temperature_high_c=75.0,
            firmware="80.1.0",
        ),
        notes=(),
        status_code=0,
    )
    module = reading.sections["Module Info"]
    assert len(module) == 15
    assert module["Compliance"] == ",400GBASE-DR4"
    assert module["SMF Length"] == "500m"
    assert module["Wavelength [nm]"] == "1311"
    assert module["Rx Power Current [dBm]"] == "0,2,-9,0 [-8..6]"
    assert module["CDR RX"] == "ON,ON,ON,ON"
    assert "Transfer Distance [m]" not in module


def test_sichek_selected_module_lines_read_the_ddm_and_identity() -> None:
    """Module Info lines selected by the scitix/sichek test author (mlxlink_dom_test.go, tool version not
    given), an OSFP optic CLT T-F4GS-BV0: colon at 35, DDM ``value [low..high]``; no Cable Type, Technology or
    Transfer Distance lines, so no medium and no length."""
    reading = read(SICHEK_DDM)
    assert reading == MstlinkReading(
        sections=reading.sections,
        state=None,
        physical_state=None,
        speed=None,
        width=None,
        status_opcode=None,
        recommendation=None,
        firmware=None,
        minutes_since_clear=None,
        effective_ber=None,
        raw_ber=None,
        symbol_ber=None,
        effective_errors=None,
        symbol_errors=None,
        raw_errors_per_lane=(),
        link_down=None,
        link_recoveries=None,
        module=ModuleInfo(
            medium=None,
            cable_type=None,
            technology=None,
            identifier="OSFP",
            vendor="CLT",
            part_number="T-F4GS-BV0",
            serial="CWJH05025502589",
            length_m=None,
            temperature_c=54.0,
            temperature_high_c=75.0,
            firmware=None,
        ),
        notes=(),
        status_code=0,
    )
    assert reading.sections["Module Info"] == {
        "Temperature [C]": "54 [-5..75]",
        "Voltage [mV]": "3261.2 [2970..3630]",
        "Bias Current [mA]": "8.380,8.380,8.380,8.380 [2..15]",
        "Rx Power Current [dBm]": "1.886,1.989,2.281,1.976 [-10.41..6]",
        "Tx Power Current [dBm]": "1.562,1.427,1.559,1.761 [-8.508..5]",
        "Identifier": "OSFP",
        "Vendor Name": "CLT",
        "Vendor Part Number": "T-F4GS-BV0",
        "Vendor Serial Number": "CWJH05025502589",
    }


def test_sichek_transcribed_counters_with_colour_codes_read_as_without() -> None:
    """``mlxlink -c`` counters as transcribed by the scitix/sichek test author (mlxlink_dom_test.go, PR #125 era,
    tool version not given; ESC[32m ... ESC[0m inserted by that author around the two BERs): the codes are
    removed, the values read as they would without them."""
    text = read_capture(SICHEK_ANSI)
    assert "\x1b[32m" in text
    reading = parse_mstlink(text)
    assert reading == MstlinkReading(
        sections=reading.sections,
        state=None,
        physical_state=None,
        speed=None,
        width=None,
        status_opcode=None,
        recommendation=None,
        firmware=None,
        minutes_since_clear=348349.5,
        effective_ber=NO_ERRORS,
        raw_ber=2e-9,
        symbol_ber=None,
        effective_errors=0,
        symbol_errors=None,
        raw_errors_per_lane=(3946476397, 5120336064, 7692183445, 3026261414),
        link_down=0,
        link_recoveries=0,
        module=None,
        notes=(),
        status_code=0,
    )
    assert reading.sections["Physical Counters and BER Info"]["Effective Physical BER"] == "15E-255"
    assert reading.sections["Physical Counters and BER Info"]["Raw Physical BER"] == "2E-9"
    assert parse_mstlink(re.sub(r"\x1b\[[0-9;]*m", "", text)) == reading


# mlx5_0..7 of the grep-filtered loop: Raw Physical Errors Per Lane and Raw Physical BER as printed
HDR_GREP_HCAS = {
    "mlx5_0": ((3183333, 242074), 1e-8, "1E-8"),
    "mlx5_1": ((2361678, 219959), 9e-9, "9E-9"),
    "mlx5_2": ((10214417, 628099), 3e-8, "3E-8"),
    "mlx5_3": ((32379149, 224947), 1e-7, "1E-7"),
    "mlx5_4": ((5811465, 2509001), 2e-8, "2E-8"),
    "mlx5_5": ((4014318, 15682171), 6e-8, "6E-8"),
    "mlx5_6": ((1068084, 136509), 4e-9, "4E-9"),
    "mlx5_7": ((5015610, 1687775), 2e-8, "2E-8"),
}


def test_mft_4_24_hdr_counters_grep_filtered_per_hca_are_read_value_for_value() -> None:
    """MFT 4.24.0-72 ``mlxlink --show_counters | grep`` over 8 ConnectX-6 (IB HDR 2x), from the shadeform/brev
    troubleshooting report: split at the loop's ``==========`` banners, each HCA's chunk has FEC and amBER
    Version before any section (notes), the bare "Physical Counters and BER Info" title (no underline) and the
    amBER IB counters without Time Since Last Clear and Link Down Counter (filtered out)."""
    parts = re.split(r"^=+ (mlx5_\d+) FEC Counters =+\n", read_capture(HDR_GREP), flags=re.MULTILINE)
    assert parts[0] == ""
    chunks = dict(zip(parts[1::2], parts[2::2], strict=True))
    assert list(chunks) == list(HDR_GREP_HCAS)
    for hca, (lanes, raw_ber, raw_ber_text) in HDR_GREP_HCAS.items():
        reading = parse_mstlink(chunks[hca])
        assert reading == MstlinkReading(
            sections=reading.sections,
            state=None,
            physical_state=None,
            speed=None,
            width=None,
            status_opcode=None,
            recommendation=None,
            firmware=None,
            minutes_since_clear=None,
            effective_ber=NO_ERRORS,
            raw_ber=raw_ber,
            symbol_ber=NO_ERRORS,
            effective_errors=0,
            symbol_errors=0,
            raw_errors_per_lane=lanes,
            link_down=None,
            link_recoveries=0,
            module=None,
            notes=(
                "line 1: FEC                             : RS-FEC - (544,514) + PLR",
                "line 2: amBER Version                   : 2.13",
            ),
            status_code=0,
        ), hca
        assert reading.sections == {
            "Physical Counters and BER Info": {
                "Symbol Errors": "0",
                "Symbol BER": "15E-255",
                "Effective Physical Errors": "0",
                "Effective Physical BER": "15E-255",
                "Raw Physical Errors Per Lane": ",".join(str(n) for n in lanes),
                "Raw Physical BER": raw_ber_text,
                "Link Error Recovery Counter": "0",
            }
        }, hca


def test_mft_4_24_hdr_default_output_keeps_the_merged_error_line_as_a_note() -> None:
    """MFT 4.24.0-72 ``mlxlink --show_ber_monitor 2>&1`` on a ConnectX-6 (IB HDR 2x), from the shadeform/brev
    troubleshooting report: colon at 32, the default sections read, the merged ``-E-`` line (option not
    supported for HCA) is a note and the lone-space lines around it are skipped."""
    reading = read(HDR_DEFAULT)
    assert reading == MstlinkReading(
        sections=reading.sections,
        state="Active",
        physical_state="LinkUp",
        speed="IB-HDR",
        width="2x",
        status_opcode=0,
        recommendation="No issue was observed",
        firmware="20.36.1010",
        minutes_since_clear=None,
        effective_ber=None,
        raw_ber=None,
        symbol_ber=None,
        effective_errors=None,
        symbol_errors=None,
        raw_errors_per_lane=(),
        link_down=None,
        link_recoveries=None,
        module=None,
        notes=('line 29: -E- "--show_ber_monitor" option is not supported for HCA',),
        status_code=0,
    )
    assert reading.sections["Operational Info"]["FEC"] == "RS-FEC - (544,514) + PLR"
    assert reading.sections["Supported Info"] == {
        "Enabled Link Speed": "0x00000075 (HDR,EDR,FDR,QDR,SDR)",
        "Supported Cable Speed": "0x0000007f (HDR,EDR,FDR,FDR10,QDR,DDR,SDR)",
    }
    assert reading.sections["Tool Information"] == {
        "Firmware Version": "20.36.1010",
        "amBER Version": "2.13",
        "MFT Version": "mft 4.24.0-72",
    }


def test_mstflint_4_35_switch_port_optic_with_errors_is_read_value_for_value() -> None:
    """Laid out (BUILT, not captured) from mstflint v4.35.0-1's source as ``mstlink -d lid-0x1a -p 33 -m -c``
    prints it on a Quantum-2 switch port (IB NDR 4x, NVIDIA MMA4Z00-NS 850 nm VCSEL optic): ``MSTFLINT
    Version``, amBER IB counters with Raw Physical BER Per Lane, a degraded link (errors, link down 2, recovery
    14), the module at 68 C against a 70 C alarm."""
    reading = read(NDR_SWITCH_BUILT)
    assert reading == MstlinkReading(
        sections=reading.sections,
        state="Active",
        physical_state="LinkUp",
        speed="IB-NDR",
        width="4x",
        status_opcode=0,
        recommendation="No issue was observed",
        firmware="31.2014.2110",
        minutes_since_clear=720.0,
        effective_ber=2e-11,
        raw_ber=3e-5,
        symbol_ber=1e-12,
        effective_errors=367188,
        symbol_errors=18359,
        raw_errors_per_lane=(98812345678, 101234567890, 244567891234, 106543219876),
        link_down=2,
        link_recoveries=14,
        module=ModuleInfo(
            medium="transceiver",
            cable_type="Optical Module (separated)",
            technology="850 nm VCSEL",
            identifier="OSFP",
            vendor="NVIDIA",
            part_number="MMA4Z00-NS",
            serial="MT2334FT05517",
            length_m=50.0,
            temperature_c=68.0,
            temperature_high_c=70.0,
            firmware="46.130.0",
        ),
        notes=(),
        status_code=0,
    )
    assert reading.sections["Supported Info"] == {
        "Enabled Link Speed": "0x000000f1 (NDR,HDR,EDR,FDR,SDR)",
        "Supported Cable Speed": "0x00000081 (NDR,SDR)",
    }
    assert reading.sections["Tool Information"]["MSTFLINT Version"] == "mstflint 4.35.0"
    module = reading.sections["Module Info"]
    assert module["Rx Power Current [dBm]"] == "0.412,0.388,-4.925,0.507 [-10.41..6]"
    assert module["Wavelength [nm]"] == "850"
    assert module["SMF Length"] == "N/A"
    assert module["Power Class"] == "> 14 W max"
    assert module["SNR Media Lanes [dB]"] == "19.21,19.05,14.62,19.33"
    counters = reading.sections["Physical Counters and BER Info"]
    assert counters["Raw Physical BER Per Lane"] == "2E-5,2E-5,5E-5,2E-5"


# --- layouts built from the captures ------------------------------------------------------------------------


def with_reset_on_the_next_line(text: str) -> str:
    """``text`` as mstflint 4.35's MlxlinkRecord writes it into a pipe: each value after ``ESC[32m`` and the
    ``ESC[0m`` reset written after the newline, so at the start of the following line."""
    out: list[str] = []
    reset = ""
    for line in text.split("\n"):
        key, sep, value = line.partition(" : ")
        line = f"{key}{sep}\x1b[32m{value}" if sep else line
        out.append(reset + line)
        reset = "\x1b[0m" if sep else ""
    return "\n".join(out)


def test_colour_codes_with_the_reset_at_the_start_of_the_next_line_read_as_without() -> None:
    """The MFT 4.35.0-159 NDR DAC capture (tests/fixtures/mstlink/ndr-cx7-hca-module-dac-col35-mft435-csegpu.txt)
    with colour codes inserted where mstflint 4.35 puts them (reset after the ``endl``) reads the same."""
    plain = read_capture(NDR_DAC)
    coloured = with_reset_on_the_next_line(plain)
    assert "\n\x1b[0mPhysical state" in coloured
    assert "\n\x1b[0m\nSupported Info" in coloured
    assert parse_mstlink(coloured) == parse_mstlink(plain)


def json_with_status(code: int, message: str) -> str:
    doc = json.loads(read_capture(CX8_JSON))
    doc["status"] = {"code": code, "message": message}
    return json.dumps(doc, indent="\t")


def test_json_with_status_code_1_keeps_the_sections_and_notes_the_message() -> None:
    """The CX-8 ``--json`` capture (400g-cx8-eth-osfp-module-json-trimmed-optics-test.txt, tool version not
    given) with its status set to code 1 (a sub-query failed; the tool exits 1) and complete output: the
    sections are read as with code 0, the message is a note and status_code is 1."""
    message = "Failed to get the module's firmware version "
    good = read(CX8_JSON)
    reading = parse_mstlink(json_with_status(1, message))
    assert reading.status_code == 1
    assert reading.notes == ("status 1: Failed to get the module's firmware version",)
    assert reading.sections == good.sections
    assert reading.module == good.module
    assert reading == MstlinkReading(sections=good.sections, module=good.module, notes=reading.notes, status_code=1)


def test_text_after_a_warning_line_reads_the_same_and_notes_the_warning() -> None:
    """The MFT 4.35.0-159 NDR DAC capture with a ``-W-`` line before it (stderr merged): same values, the
    warning a note."""
    warning = "-W- Failed to read the module's firmware version: Operation not supported"
    plain = parse_mstlink(read_capture(NDR_DAC))
    reading = parse_mstlink(warning + "\n" + read_capture(NDR_DAC))
    assert reading.notes == (f"line 1: {warning}",)
    assert reading.sections == plain.sections
    assert reading == MstlinkReading(**{**vars(plain), "notes": reading.notes})


def test_json_after_a_warning_line_reads_the_same_and_notes_the_warning() -> None:
    """The CX-8 ``--json`` capture with a ``-W-`` line before the ``{``: same values, the warning a note."""
    warning = "-W- Unable to get the cable's attenuation"
    plain = read(CX8_JSON)
    reading = parse_mstlink(warning + "\n" + read_capture(CX8_JSON))
    assert reading.notes == (f"line 1: {warning}",)
    assert reading.status_code == 0
    assert reading.sections == plain.sections
    assert reading.module == plain.module


LINK_DOWN = """\
Operational Info
----------------
State                              : Polling
Physical state                     : Polling
Speed                              : N/A
Width                              : N/A
FEC                                : N/A
Loopback Mode                      : No Loopback
Auto Negotiation                   : ON

Troubleshooting Info
--------------------
Status Opcode                      : N/A
Group Opcode                       : N/A
Recommendation                     : N/A

Tool Information
----------------
Firmware Version                   : N/A
amBER Version                      : N/A
MSTFLINT Version                   : mstflint 4.35.0

Module Info
-----------
Temperature [C]                    : N/A
Identifier                         : N/A
Cable Technology                   : N/A
Cable Type                         : Cable unplugged
Vendor Name                        : N/A
Vendor Part Number                 : N/A
Vendor Serial Number               : N/A
Transfer Distance [m]              : N/A
SMF Length                         : N/A
FW Version                         : N/A

Physical Counters and BER Info
------------------------------
Time Since Last Clear [Min]        : N/A
Symbol Errors                      : N/A
Symbol BER                         : N/A
Effective Physical Errors          : N/A
Effective Physical BER             : N/A
Raw Physical Errors Per Lane       : N/A
Raw Physical BER                   : N/A
Link Down Counter                  : N/A
Link Error Recovery Counter        : N/A
"""


def test_na_values_of_a_link_that_is_down_read_as_none() -> None:
    reading = parse_mstlink(LINK_DOWN)
    assert reading == MstlinkReading(
        sections=reading.sections,
        state="Polling",
        physical_state="Polling",
        module=ModuleInfo(
            medium=None,
            cable_type="Cable unplugged",
            technology=None,
            identifier=None,
            vendor=None,
            part_number=None,
            serial=None,
            length_m=None,
            temperature_c=None,
            temperature_high_c=None,
            firmware=None,
        ),
    )
    assert reading.sections["Physical Counters and BER Info"]["Raw Physical BER"] == "N/A"
    assert parse_ber("N/A") is None


def test_no_errors_ber_15e_255_reads_below_any_limit() -> None:
    ber = parse_ber("15E-255")
    assert ber == NO_ERRORS
    assert ber is not None
    assert 0 < ber < 1e-250
    assert parse_ber("1E-8") == 1e-8
    assert parse_ber("\x1b[32m2E-9\x1b[0m") == 2e-9


def module_text(*lines: tuple[str, str]) -> str:
    """A Module Info section of ``(key, value)`` lines, colon at 35 as mstflint 4.35 prints it."""
    return "Module Info\n-----------\n" + "".join(f"{key:<35}: {value}\n" for key, value in lines)


@pytest.mark.parametrize(
    ("printed", "temperature"),
    [("0 [0..0]", 0.0), ("35 [-40..-40]", 35.0), ("-3 [-40..-40]", -3.0)],
)
def test_placeholder_ranges_give_no_temperature_threshold(printed: str, temperature: float) -> None:
    module = parse_mstlink(module_text(("Temperature [C]", printed))).module
    assert module is not None
    assert module.temperature_c == temperature
    assert module.temperature_high_c is None


def test_a_real_range_gives_the_high_threshold() -> None:
    module = parse_mstlink(module_text(("Temperature [C]", "41 [-5..75]"))).module
    assert module is not None
    assert (module.temperature_c, module.temperature_high_c) == (41.0, 75.0)


def test_a_single_mode_module_with_no_transfer_distance_reads_its_smf_length() -> None:
    text = module_text(
        ("Cable Technology", "1310 nm EML"),
        ("Cable Type", "Optical Module (separated)"),
        ("Transfer Distance [m]", "0.0"),
        ("SMF Length", "100m"),
    )
    module = parse_mstlink(text).module
    assert module is not None
    assert module.length_m == 100.0
    assert module.medium == "transceiver"


@pytest.mark.parametrize(
    ("cable_type", "technology", "medium"),
    [
        ("Passive copper cable", "Copper cable, passive, unequalized", "dac"),
        ("Active cable (active copper / optics)", "Copper cable, linear active equalizers", "acc"),
        ("Active cable (active copper / optics)", "Copper cable, near and far end limiting active equalizers", "acc"),
        ("Active cable (active copper / optics)", "850 nm VCSEL", "aoc"),
        ("Optical Module (separated)", "850 nm VCSEL", "transceiver"),
        ("Optical Module (separated)", "1310 nm EML", "transceiver"),
        ("Cable unplugged", None, None),
        ("Unidentified", None, None),
        (None, None, None),
    ],
)
def test_cable_medium_of_each_cable_type(cable_type: str | None, technology: str | None, medium: str | None) -> None:
    assert cable_medium(cable_type, technology) == medium


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n \n",
        "-E- Failed to open device: /dev/mst/mt4129_pciconf0\n",
        "mlxlink: command not found\n",
        '{"status": {"code": 1, "message": "Failed to open device"}}\n',
    ],
)
def test_output_with_no_section_is_a_parse_error(text: str) -> None:
    with pytest.raises(ParseError):
        parse_mstlink(text)
