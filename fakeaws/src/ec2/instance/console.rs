//! An instance's console: GetConsoleOutput, and GetPasswordData beside it.
//!
//! AWS posts an instance's console output shortly after each of its transitions (a boot, a
//! stop, a reboot, a termination) and keeps the latest 64 KiB. No operating system runs in the
//! fake, so its console holds a line for each such transition the fake makes (recorded as it
//! makes it, written out when read): a program that fetches a failed machine's console (and
//! decodes it) gets text, in AWS's shape. Before the first boot there is nothing yet: the answer holds
//! the instance's id alone, as AWS's does while no output has been posted.
//!
//! Every image the fake holds is a Linux one, and a Linux instance has no Windows
//! administrator password: GetPasswordData answers the empty string the API reference
//! documents for a password that is not available (so the `PasswordDataAvailable` waiter
//! never passes, as on AWS for a Linux instance).

use aws_smithy_types::DateTime;

use crate::ec2::Kind;
use crate::generated::ec2::{
    GetConsoleOutputRequest, GetConsoleOutputResult, GetPasswordDataRequest, GetPasswordDataResult,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::Instance;

/// The most console output kept, as AWS keeps it: the latest 64 KiB.
pub const MAX_CONSOLE: usize = 64 * 1024;

/// The most posts an instance keeps: their lines fit within [`MAX_CONSOLE`].
const MAX_POSTS: usize = 256;

/// What the fake did to an instance, as its console tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Did {
    /// Pending to running.
    Booted,
    /// RebootInstances.
    Rebooted,
    /// Stopping to stopped.
    Stopped,
    /// Terminated.
    Terminated,
}

impl Did {
    fn as_str(self) -> &'static str {
        match self {
            Did::Booted => "booted",
            Did::Rebooted => "rebooted",
            Did::Stopped => "stopped",
            Did::Terminated => "terminated",
        }
    }
}

/// One post to an instance's console: what the fake did, and when. The text is written when
/// the console is read (a few bytes kept per post rather than a line).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Post {
    did: Did,
    #[serde(with = "crate::state::with::time")]
    at: DateTime,
}

/// Posts that the fake did `did` to `i` at `at`, keeping the latest [`MAX_POSTS`].
pub(super) fn post(i: &mut Instance, at: DateTime, did: Did) {
    if i.console.len() >= MAX_POSTS {
        i.console.remove(0);
    }
    i.console.push(Post { did, at });
}

/// The console text of `i`: a line per post, the oldest first, within [`MAX_CONSOLE`].
fn text(i: &Instance) -> String {
    use std::fmt::Write;
    let mut text = String::new();
    for p in &i.console {
        // Writing to a String cannot fail.
        let _ = writeln!(
            text,
            "fakeaws: {} ({}, {}) {} at {}; no operating system runs in the fake, so its \
             console holds only what the fake did to the instance",
            i.id,
            i.instance_type.as_str(),
            i.image_id,
            p.did.as_str(),
            crate::protocol::xml::format_timestamp(p.at),
        );
    }
    keep_latest(&mut text);
    text
}

/// Drops the oldest whole lines of `text` until it holds at most [`MAX_CONSOLE`] bytes.
fn keep_latest(text: &mut String) {
    let excess = text.len().saturating_sub(MAX_CONSOLE);
    if excess == 0 {
        return;
    }
    // The first line break at or after the excess: every line before it goes.
    match text
        .get(excess.saturating_sub(1)..)
        .and_then(|rest| rest.find('\n'))
    {
        Some(at) => {
            text.drain(..excess.saturating_sub(1) + at + 1);
        }
        None => text.clear(),
    }
}

/// `GetConsoleOutput`: the instance's console, base64, and when it was last posted to.
/// `Latest` is taken and gives the same: the fake's console is whole at every post.
pub fn get_console_output(
    region: &mut Region,
    input: GetConsoleOutputRequest,
) -> Result<GetConsoleOutputResult, ApiError> {
    let i = Kind::Instance.get(&region.instances, &input.instance_id)?;
    let last = i.console.last().map(|p| p.at);
    Ok(GetConsoleOutputResult {
        instance_id: Some(i.id.clone()),
        timestamp: last,
        output: last.map(|_| aws_smithy_types::base64::encode(text(i).as_bytes())),
    })
}

/// `GetPasswordData`: no password, for an instance of a Linux image; the data dated at its
/// launch.
pub fn get_password_data(
    region: &mut Region,
    input: GetPasswordDataRequest,
) -> Result<GetPasswordDataResult, ApiError> {
    let i = Kind::Instance.get(&region.instances, &input.instance_id)?;
    Ok(GetPasswordDataResult {
        instance_id: Some(i.id.clone()),
        timestamp: Some(i.launch_time),
        password_data: Some(String::new()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_console_keeps_the_latest_whole_lines_within_its_limit() {
        let line = |n: usize| format!("line {n:05} {}\n", "x".repeat(90));
        let mut text = String::new();
        let mut n = 0;
        while text.len() <= MAX_CONSOLE {
            text.push_str(&line(n));
            n += 1;
        }
        keep_latest(&mut text);
        assert!(text.len() <= MAX_CONSOLE);
        assert!(text.starts_with("line ") && text.ends_with(&line(n - 1)));
        // Only as many lines went as were needed.
        assert!(text.len() + line(0).len() > MAX_CONSOLE);
        let short = "a\nb\n".to_string();
        let mut kept = short.clone();
        keep_latest(&mut kept);
        assert_eq!(kept, short);
    }
}
