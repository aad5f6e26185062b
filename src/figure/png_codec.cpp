// attnviz figure: libpng encoder and decoder (png_codec.h). libpng reports errors by longjmp;
// nothing here allocates with new between setjmp and the calls that may jump.
#include "figure/png_codec.h"

#include <png.h>

#include <cmath>
#include <csetjmp>
#include <cstring>
#include <string>

namespace attnviz {
namespace {

void AppendToVector(png_structp png, png_bytep data, png_size_t n) {
  auto* out = static_cast<std::vector<uint8_t>*>(png_get_io_ptr(png));
  out->insert(out->end(), data, data + n);
}
void NoFlush(png_structp) {}

}  // namespace

Status EncodePngRgba(const uint8_t* rgba, int width, int height, float dpi, std::vector<uint8_t>* out) {
  if (!rgba || width < 1 || height < 1 || width > (1 << 20) || height > (1 << 20))
    return Status::Error("png: bad image size " + std::to_string(width) + " x " + std::to_string(height));
  out->clear();
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info) {
    png_destroy_write_struct(&png, &info);
    return Status::Error("png: out of memory");
  }
  std::vector<png_bytep> rows((size_t)height);
  for (int y = 0; y < height; ++y) rows[(size_t)y] = const_cast<png_bytep>(rgba + (size_t)y * (size_t)width * 4);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return Status::Error("png: libpng failed to encode the image");
  }
  png_set_write_fn(png, out, AppendToVector, NoFlush);
  png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8, PNG_COLOR_TYPE_RGBA, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (dpi > 0) {
    const png_uint_32 ppm = (png_uint_32)std::lround(dpi / 0.0254);
    png_set_pHYs(png, info, ppm, ppm, PNG_RESOLUTION_METER);
  }
  png_set_rows(png, info, rows.data());
  png_write_png(png, info, PNG_TRANSFORM_IDENTITY, nullptr);
  png_destroy_write_struct(&png, &info);
  return Status::Ok();
}

Status EncodePng(const RgbaImage& img, float dpi, std::vector<uint8_t>* out) {
  return EncodePngRgba(img.rgba.data(), img.width, img.height, dpi, out);
}

Status DecodePng(const uint8_t* data, size_t size, RgbaImage* out, int64_t max_pixels) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, data, size)) return Status::Error(std::string("png: ") + image.message);
  if ((int64_t)image.width * (int64_t)image.height > max_pixels) {
    png_image_free(&image);
    return Status::Error("png: image too large");
  }
  image.format = PNG_FORMAT_RGBA;
  out->width = (int)image.width, out->height = (int)image.height;
  out->rgba.assign(PNG_IMAGE_SIZE(image), 0);
  if (!png_image_finish_read(&image, nullptr, out->rgba.data(), 0, nullptr))
    return Status::Error(std::string("png: ") + image.message);
  return Status::Ok();
}

}  // namespace attnviz
