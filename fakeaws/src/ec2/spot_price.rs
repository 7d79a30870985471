//! The fake's Spot market prices, and `DescribeSpotPriceHistory` over them.
//!
//! - A Spot price is kept per instance type of the catalogue
//!   ([`super::instance_type::on_demand_price`]), availability zone and product description
//!   (the four of the model's `RIProductDescription`: `Linux/UNIX`, `Windows`, each also
//!   `(Amazon VPC)`; the SUSE and Red Hat descriptions the API reference also lists are not
//!   values of the model's type, and are not kept).
//! - Prices change once a day, at 00:00 UTC: each is between 25% and 45% of the On-Demand
//!   price (the product's surcharge per vCPU included), a share drawn by hashing the type, the
//!   zone's id and the day, so that every run of the fake answers the same prices.
//! - The history answers, for every pool the request selects, the price changes between
//!   `StartTime` and `EndTime` and the last change before `StartTime` (the price in effect
//!   then), as the API reference describes; `EndTime` defaults to the fake's now and cannot be
//!   later; `StartTime` is at most 90 days back and defaults to `EndTime` (the prices in
//!   effect then: the fake does not list 90 days of every pool unasked). Newest first per
//!   pool; `MaxResults` 1 to 1000 (1000 by default), pages by `NextToken`.

use aws_smithy_types::DateTime;

use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::instance_type;
use crate::ec2::page;
use crate::generated::ec2::{
    DescribeSpotPriceHistoryRequest, DescribeSpotPriceHistoryResult, InstanceType,
    RIProductDescription, SpotPrice,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// The product descriptions Spot prices are kept for, with the surcharge per vCPU (USD per
/// hour) of the operating system's licence over Linux's price (the fake's, of AWS's order).
const PRODUCTS: &[(&str, f64)] = &[
    ("Linux/UNIX", 0.0),
    ("Linux/UNIX (Amazon VPC)", 0.0),
    ("Windows", 0.046),
    ("Windows (Amazon VPC)", 0.046),
];

/// The product description a Linux instance in a VPC is priced by.
pub const LINUX_VPC: &str = "Linux/UNIX (Amazon VPC)";

const DAY: i64 = 24 * 60 * 60;

/// How far back the history goes (AWS: up to the past 90 days).
const HISTORY_DAYS: i64 = 90;

/// FNV-1a over the parts (stable from build to build, unlike std's hashers).
fn hash(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.iter().chain(std::iter::once(&0xff)) {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// The On-Demand price of `t` for `product` (USD per hour), if the catalogue knows `t`.
pub fn on_demand(t: InstanceType, product: &str) -> Option<f64> {
    let linux = instance_type::on_demand_price(t)?;
    let surcharge = PRODUCTS
        .iter()
        .find(|(p, _)| *p == product)
        .map_or(0.0, |(_, s)| *s);
    let vcpus = f64::from(instance_type::vcpus(t).unwrap_or(1));
    Some(linux + surcharge * vcpus)
}

/// The Spot price of `t` in zone `zone_id` for `product` on day `day` (days since the epoch),
/// rounded to the millionth of a dollar as AWS shows it.
fn price_on(t: InstanceType, zone_id: &str, product: &str, day: i64) -> Option<f64> {
    let full = on_demand(t, product)?;
    let h = hash(&[
        t.as_str().as_bytes(),
        zone_id.as_bytes(),
        &day.to_le_bytes(),
    ]);
    let share = 0.25 + 0.20 * ((h % 10_000) as f64 / 10_000.0);
    Some((full * share * 1e6).round() / 1e6)
}

/// The Spot price of `t` in zone `zone_id` now, for a Linux instance in a VPC.
pub fn current(region: &Region, t: InstanceType, zone_id: &str) -> Option<f64> {
    let day = region.clock.now_datetime().secs().div_euclid(DAY);
    price_on(t, zone_id, LINUX_VPC, day)
}

/// A price as AWS writes it: six decimals.
pub fn shown(price: f64) -> String {
    format!("{price:.6}")
}

/// One entry of the history.
struct Entry {
    instance_type: InstanceType,
    zone: String,
    zone_id: String,
    product: &'static str,
    price: f64,
    day: i64,
}

impl Filterable for Entry {
    const NAMES: &'static [&'static str] = &[
        "availability-zone",
        "availability-zone-id",
        "instance-type",
        "product-description",
        "spot-price",
        "timestamp",
    ];
    const TAGGABLE: bool = false;

    fn values(&self, name: &str) -> Vec<String> {
        match name {
            "availability-zone" => one(self.zone.clone()),
            "availability-zone-id" => one(self.zone_id.clone()),
            "instance-type" => one(self.instance_type.as_str()),
            "product-description" => one(self.product),
            "spot-price" => one(shown(self.price)),
            "timestamp" => one(crate::protocol::xml::format_timestamp(DateTime::from_secs(
                self.day.saturating_mul(DAY),
            ))),
            _ => Vec::new(),
        }
    }
}

/// `DescribeSpotPriceHistory`.
pub fn describe_spot_price_history(
    region: &Region,
    input: DescribeSpotPriceHistoryRequest,
) -> Result<DescribeSpotPriceHistoryResult, ApiError> {
    page::check_max_results(input.max_results, 1, 1000)?;
    let filters = Filters::parse::<Entry>(input.filters)?;
    if input.availability_zone.is_some() && input.availability_zone_id.is_some() {
        return Err(ApiError::invalid_combination(
            "Either AvailabilityZone or AvailabilityZoneId can be specified, but not both.",
        ));
    }
    let now = region.clock.now_datetime().secs();
    let end = input.end_time.map_or(now, |t| t.secs()).min(now);
    let start = input.start_time.map_or(end, |t| t.secs());
    if start > end {
        return Err(ApiError::invalid_parameter(
            "StartTime",
            &crate::protocol::xml::format_timestamp(DateTime::from_secs(start)),
            "The start time must not be later than the end time.",
        ));
    }
    let oldest = now.div_euclid(DAY) - HISTORY_DAYS;
    let first_day = start.div_euclid(DAY).max(oldest);
    let last_day = end.div_euclid(DAY);
    let zones: Vec<(String, String)> = region
        .zones
        .iter()
        .filter(|z| region.zone_usable(z) && !z.is_edge())
        .filter(|z| {
            input
                .availability_zone
                .as_ref()
                .is_none_or(|n| *n == z.name)
        })
        .filter(|z| {
            input
                .availability_zone_id
                .as_ref()
                .is_none_or(|i| *i == z.id)
        })
        .map(|z| (z.name.clone(), z.id.clone()))
        .collect();
    if let Some(name) = &input.availability_zone
        && zones.is_empty()
    {
        return Err(ApiError::invalid_parameter(
            "AvailabilityZone",
            name,
            "The Availability Zone is not one of this region's.",
        ));
    }
    let types: Vec<InstanceType> = match &input.instance_types {
        Some(wanted) if !wanted.is_empty() => instance_type::catalogued()
            .filter(|t| wanted.contains(t))
            .collect(),
        _ => instance_type::catalogued().collect(),
    };
    let products: Vec<&'static str> = match &input.product_descriptions {
        Some(wanted) if !wanted.is_empty() => PRODUCTS
            .iter()
            .map(|(p, _)| *p)
            .filter(|p| wanted.iter().any(|w| w == p))
            .collect(),
        _ => PRODUCTS.iter().map(|(p, _)| *p).collect(),
    };
    let after: Option<usize> = match input.next_token.as_deref().filter(|t| !t.is_empty()) {
        Some(t) => Some(
            page::decode_token(t)?
                .parse()
                .map_err(|_| page::bad_token(t))?,
        ),
        None => None,
    };
    let max = usize::try_from(input.max_results.unwrap_or(1000)).unwrap_or(1000);
    // Every entry in a stable order, numbered; the token names the last one answered.
    let days = usize::try_from(last_day - first_day + 1).unwrap_or(0);
    let (zones, products) = (&zones, &products);
    let all = types.iter().flat_map(|t| {
        zones.iter().flat_map(move |z| {
            products
                .iter()
                .flat_map(move |p| (0..days).map(move |d| (*t, z, *p, last_day - d as i64)))
        })
    });
    let mut found = Vec::new();
    let mut next = None;
    for (index, (t, (zone, zone_id), product, day)) in all.enumerate() {
        if after.is_some_and(|a| index <= a) {
            continue;
        }
        let Some(price) = price_on(t, zone_id, product, day) else {
            continue;
        };
        let entry = Entry {
            instance_type: t,
            zone: zone.clone(),
            zone_id: zone_id.clone(),
            product,
            price,
            day,
        };
        if !filters.matches(&entry, None) {
            continue;
        }
        if found.len() == max {
            next = found
                .last()
                .map(|(i, _)| page::encode_token(&format!("{i}")));
            break;
        }
        found.push((index, entry));
    }
    Ok(DescribeSpotPriceHistoryResult {
        spot_price_history: Some(
            found
                .into_iter()
                .map(|(_, e)| SpotPrice {
                    availability_zone: Some(e.zone),
                    availability_zone_id: Some(e.zone_id),
                    instance_type: Some(e.instance_type),
                    product_description: RIProductDescription::from_wire(e.product),
                    spot_price: Some(shown(e.price)),
                    timestamp: Some(DateTime::from_secs(e.day.saturating_mul(DAY))),
                })
                .collect(),
        ),
        next_token: next,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_are_a_share_of_on_demand_and_change_by_day() {
        let t = InstanceType::M5Large;
        let od = on_demand(t, LINUX_VPC).unwrap();
        assert!((od - 0.096).abs() < 1e-9, "{od}");
        let days: Vec<f64> = (0..30)
            .map(|d| price_on(t, "use1-az1", LINUX_VPC, 20_000 + d).unwrap())
            .collect();
        assert!(
            days.iter()
                .all(|p| *p >= od * 0.25 - 1e-6 && *p <= od * 0.45 + 1e-6)
        );
        assert!(days.windows(2).any(|w| w[0] != w[1]), "prices change");
        assert_eq!(
            price_on(t, "use1-az1", LINUX_VPC, 20_000),
            price_on(t, "use1-az1", LINUX_VPC, 20_000)
        );
        let windows = price_on(t, "use1-az1", "Windows", 20_000).unwrap();
        assert!(windows > days[0]);
    }
}
