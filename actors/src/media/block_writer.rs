//! Writes a large incoming file to disk in big blocks, off the async threads, with direct I/O.
//!
//! Why blocks: `tokio::fs::File` costs a blocking-pool hop and a copy per chunk; here one block
//! fills while the previous one is written on the blocking pool (double buffering), so an upload
//! costs one hop per 4 MB and holds at most two blocks in memory.
//!
//! Why direct I/O (`O_DIRECT`): a media file is written once and read much later, so
//! passing it through the page cache only evicts more useful pages and costs a kernel copy per
//! byte. Measured on this project's virtual machine, the page cache path was also erratic: the
//! host hands idle guest memory back within seconds, so a writer slower than `dd` kept writing
//! into memory that had to be faulted in again, and spent four to six times `dd`'s kernel time
//! per byte; direct writes of aligned blocks ran at the disk's speed whatever the memory did.
//! Full blocks go direct from an aligned buffer; the last, partial block is written through the
//! page cache (direct I/O needs aligned lengths). A file system that refuses direct I/O gets
//! ordinary writes throughout.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
use rustix::io::Errno;

use tokio::task::JoinHandle;

/// Size of one write.
pub const BLOCK: usize = 4 << 20;
/// Alignment of buffers, lengths and offsets for direct I/O (covers 512- and 4096-byte sectors).
const ALIGN: usize = 4096;

/// Creates `path` (which must not exist) for writing, with direct I/O where the file system
/// allows it.
pub async fn create(path: &Path) -> io::Result<BlockWriter> {
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || {
        let direct =
            File::options().write(true).create_new(true).custom_flags(OFlags::DIRECT.bits() as i32).open(&path);
        match direct {
            Ok(file) => Ok(BlockWriter::new(file, true)),
            // Refused by the file system: ordinary writes. (The refused open may already have
            // created the file, so this one may find it.)
            Err(e) if e.raw_os_error() == Some(Errno::INVAL.raw_os_error()) => {
                let file = File::options().write(true).create(true).truncate(true).open(&path)?;
                Ok(BlockWriter::new(file, false))
            }
            Err(e) => Err(e),
        }
    })
    .await
    .map_err(io::Error::other)?
}

/// See the module documentation. Its writes are not cancel safe: after a cancelled call, drop it.
#[derive(Debug)]
pub struct BlockWriter {
    /// The file while no write is in flight (`None` after a failed write).
    idle: Option<Sink>,
    filling: Block,
    in_flight: Option<JoinHandle<io::Result<(Sink, Block)>>>,
    /// The next block's position in the file.
    offset: u64,
}

/// The file and how it is being written.
#[derive(Debug)]
struct Sink {
    file: File,
    direct: bool,
}

impl BlockWriter {
    fn new(file: File, direct: bool) -> Self {
        BlockWriter { idle: Some(Sink { file, direct }), filling: Block::new(), in_flight: None, offset: 0 }
    }

    /// Appends `data`, sending each block as it fills.
    pub async fn write(&mut self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            let room = self.filling.room();
            let take = room.len().min(data.len());
            room[..take].copy_from_slice(&data[..take]);
            self.filling.len += take;
            data = &data[take..];
            if self.filling.is_full() {
                self.send_block().await?;
            }
        }
        Ok(())
    }

    /// Writes what is buffered and fsyncs the file. The last call: nothing is written after it.
    pub async fn finish(&mut self) -> io::Result<()> {
        let (mut sink, _) = self.settle().await?;
        let tail = std::mem::replace(&mut self.filling, Block::empty());
        let offset = self.offset;
        self.offset += tail.len as u64;
        let sink = tokio::task::spawn_blocking(move || {
            if sink.direct && tail.len > 0 {
                // A partial block has an unaligned length: written through the page cache.
                stop_direct(&sink.file)?;
                sink.direct = false;
            }
            sink.file.write_all_at(tail.filled(), offset)?;
            sink.file.sync_all()?;
            Ok::<_, io::Error>(sink)
        })
        .await
        .map_err(io::Error::other)??;
        self.idle = Some(sink);
        Ok(())
    }

    /// Waits for the block in flight, then starts writing the one just filled.
    async fn send_block(&mut self) -> io::Result<()> {
        let (mut sink, spare) = self.settle().await?;
        let block = std::mem::replace(&mut self.filling, spare.unwrap_or_else(Block::new));
        let offset = self.offset;
        self.offset += block.len as u64;
        self.in_flight = Some(tokio::task::spawn_blocking(move || {
            write_block(&mut sink, block.filled(), offset)?;
            Ok((sink, block))
        }));
        Ok(())
    }

    /// Waits for the block in flight; gives back the file and, emptied, the block it wrote.
    async fn settle(&mut self) -> io::Result<(Sink, Option<Block>)> {
        match self.in_flight.take() {
            Some(task) => {
                let (sink, mut block) = task.await.map_err(io::Error::other)??;
                block.len = 0;
                Ok((sink, Some(block)))
            }
            None => {
                let sink = self.idle.take().ok_or_else(|| io::Error::other("an earlier write failed"))?;
                Ok((sink, None))
            }
        }
    }
}

/// Writes a full block at `offset`; if the file system turns out to refuse direct writes, turns
/// them off and writes it through the page cache (a positional write, so the retry is exact).
fn write_block(sink: &mut Sink, data: &[u8], offset: u64) -> io::Result<()> {
    match sink.file.write_all_at(data, offset) {
        Err(e) if sink.direct && e.raw_os_error() == Some(Errno::INVAL.raw_os_error()) => {
            stop_direct(&sink.file)?;
            sink.direct = false;
            sink.file.write_all_at(data, offset)
        }
        result => result,
    }
}

/// Turns direct I/O off for `file`: later writes go through the page cache.
fn stop_direct(file: &File) -> io::Result<()> {
    let flags = fcntl_getfl(file)?;
    Ok(fcntl_setfl(file, flags - OFlags::DIRECT)?)
}

/// A `BLOCK`-sized buffer whose start is aligned for direct I/O.
#[derive(Debug)]
struct Block {
    storage: Box<[u8]>,
    start: usize,
    /// Bytes filled.
    len: usize,
}

impl Block {
    fn new() -> Self {
        let storage = vec![0u8; BLOCK + ALIGN].into_boxed_slice();
        let start = storage.as_ptr().align_offset(ALIGN);
        Block { storage, start, len: 0 }
    }

    /// A block with no storage, to stand in for one moved out.
    fn empty() -> Self {
        Block { storage: Box::default(), start: 0, len: 0 }
    }

    fn filled(&self) -> &[u8] {
        &self.storage[self.start..self.start + self.len]
    }

    fn room(&mut self) -> &mut [u8] {
        &mut self.storage[self.start + self.len..self.start + BLOCK]
    }

    fn is_full(&self) -> bool {
        self.len == BLOCK
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn blocks_and_tail_arrive_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("media");
        let mut writer = create(&path).await.unwrap();
        let data: Vec<u8> = (0..2 * BLOCK + 12_345).map(|i| (i % 253) as u8).collect();
        for piece in data.chunks(1_000_003) {
            writer.write(piece).await.unwrap();
        }
        writer.finish().await.unwrap();
        assert!(std::fs::read(&path).unwrap() == data);
    }

    #[tokio::test]
    async fn a_refused_direct_write_is_retried_through_the_page_cache() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("media");
        let mut writer = create(&path).await.unwrap();
        let mut sink = writer.idle.take().unwrap();
        assert!(sink.direct, "the temp directory's file system takes direct I/O");
        // An unaligned buffer is refused by direct I/O (EINVAL), as a file system without
        // direct I/O support refuses every write.
        let storage = vec![5u8; BLOCK + 1];
        write_block(&mut sink, &storage[1..], 0).unwrap();
        assert!(!sink.direct);
        write_block(&mut sink, b"tail", BLOCK as u64).unwrap();
        let written = std::fs::read(&path).unwrap();
        assert_eq!(written.len(), BLOCK + 4);
        assert!(written[..BLOCK].iter().all(|&b| b == 5));
        assert_eq!(&written[BLOCK..], b"tail");
    }
}
