//! `boardcast ports`: lists the machine's serial ports and marks likely DGT boards.

use serialport::{SerialPortInfo, SerialPortType};

/// USB vendor id reported for DGT boards (reference §1.1; one secondary source).
const DGT_USB_VENDOR: u16 = 0x2D80;

/// One line of the listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortLine {
    /// Device path.
    pub path: String,
    /// What kind of port it is, with USB details where known.
    pub kind: String,
    /// Whether it looks like a DGT board.
    pub likely_dgt: bool,
}

/// Describes one port and judges whether it is likely a DGT board.
pub fn describe(info: &SerialPortInfo) -> PortLine {
    let (kind, likely_dgt) = match &info.port_type {
        SerialPortType::UsbPort(usb) => {
            let names = [usb.manufacturer.as_deref(), usb.product.as_deref()];
            let named_dgt = names
                .iter()
                .flatten()
                .any(|n| n.to_ascii_uppercase().contains("DGT"));
            let text = format!(
                "USB {:04x}:{:04x} {} {}",
                usb.vid,
                usb.pid,
                usb.manufacturer.as_deref().unwrap_or(""),
                usb.product.as_deref().unwrap_or("")
            );
            (
                text.trim_end().to_string(),
                usb.vid == DGT_USB_VENDOR || named_dgt,
            )
        }
        SerialPortType::BluetoothPort => {
            // Paired DGT Bluetooth boards appear as rfcomm devices (reference §1.1).
            ("Bluetooth (rfcomm)".to_string(), true)
        }
        SerialPortType::PciPort => ("PCI serial".to_string(), false),
        SerialPortType::Unknown => ("serial".to_string(), false),
    };
    PortLine {
        path: info.port_name.clone(),
        kind,
        likely_dgt,
    }
}

/// Prints the listing; returns how many ports were found.
pub fn print_ports() -> Result<usize, serialport::Error> {
    let ports = serialport::available_ports()?;
    if ports.is_empty() {
        println!(
            "No serial ports found. Is the board plugged in? (`boardcast simulate` gives a virtual one.)"
        );
    }
    for line in ports.iter().map(describe) {
        let mark = if line.likely_dgt {
            "  <- likely a DGT board"
        } else {
            ""
        };
        println!("{}  {}{}", line.path, line.kind, mark);
    }
    Ok(ports.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serialport::UsbPortInfo;

    fn usb(vid: u16, product: Option<&str>) -> SerialPortInfo {
        SerialPortInfo {
            port_name: "/dev/ttyACM0".into(),
            port_type: SerialPortType::UsbPort(UsbPortInfo {
                vid,
                pid: 1,
                serial_number: None,
                manufacturer: None,
                product: product.map(String::from),
            }),
        }
    }

    #[test]
    fn dgt_vendor_or_name_marks_a_board() {
        assert!(describe(&usb(DGT_USB_VENDOR, None)).likely_dgt);
        assert!(describe(&usb(0x1234, Some("DGT Board"))).likely_dgt);
        assert!(!describe(&usb(0x1234, Some("Arduino"))).likely_dgt);
    }
}
