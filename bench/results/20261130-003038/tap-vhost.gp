# gnuplot tap-vhost.gp (in this directory) redraws tap-vhost.png
set terminal pngcairo size 1100,640 font 'sans,9'
set output 'tap-vhost.png'
set datafile missing 'nan'
set title "tap-vhost: frames into a tap through vhost-net batches and write(), NAPI off/on, XDP drop/pass\n5 rounds; bars: median, whiskers: min-max" noenhanced
set style fill solid 0.5 border -1
set grid ytics
set yrange [0:*]
set xrange [-0.6:11.6]
set bmargin 13
set xtics rotate by -40 left noenhanced
set key top right noenhanced
set ylabel "frames into the tap per second, ratio"
set boxwidth 0.38
plot 1 with lines dt 2 lc 'gray' notitle, 'tap-vhost.dat' using ($1-0.19):3:4:5:(0.38):xtic(2) with boxerrorbars title "× write() NAPI off", 'tap-vhost.dat' using ($1+0.19):6:7:8:(0.38) with boxerrorbars title "× NAPI off"
